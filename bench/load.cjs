'use strict'
// `npm run load -- <autocannon arguments>`: autocannon's own command line,
// with two differences that matter for this server:
//
// * Any method token works in -m (UPDATE, PURGE, lower-case ones): the method,
//   and those of a --har file, are added to autocannon's list first
//   (autocannon-methods.cjs). Plain autocannon refuses them, prints
//   "UPDATE HTTP method is not supported", and exits 0.
// * The exit status says whether the run measured anything: 1 when autocannon
//   fails (a bad option, a request it cannot build), when no request got a
//   response at all (nothing listening there, or every request timed out:
//   then it says after how long, and how to wait longer), or when every
//   response was a
//   4xx or 5xx (a wrong token, path or method measures only refusals); 2 for
//   a command line it cannot use; 0 otherwise. The reason goes to stderr,
//   after autocannon's own report.
// * With -I, `[<id>]` works in the URL, not only in the body, so each POST
//   can publish a post of its own: "$B/api/v1/post/[<id>]". autocannon
//   replaces it there too, but its argument parser takes a word ending in "]"
//   for the end of a sub-argument list and garbles the command line.
//
// Plain CommonJS, like autocannon-methods.cjs, so it runs without a build.

const extra = require('./autocannon-methods.cjs')

const autocannonMain = require.resolve('autocannon', { paths: [__dirname, process.cwd()] })
const autocannon = require(autocannonMain)

function say (message) {
  process.stderr.write(`load: ${message}\n`)
}

function stop (code, message) {
  say(message)
  process.exitCode = code
}

const INFO_FLAGS = ['-h', '--help', '-v', '--version']

// `[<id>]` in a URL, hidden from the argument parser and restored after it.
const ID = '[<id>]'
const HIDDEN_ID = '__startline_load_id__'
const isUrl = (arg) => /^https?:\/\//i.test(arg)

/** Every method the run will send: -m (GET when absent) and the requests of a HAR file. */
function methodsOf (argv) {
  const methods = []
  if (Array.isArray(argv.method)) throw new Error(`give -m once (got ${argv.method.join(', ')})`)
  if (argv.method !== undefined) methods.push(String(argv.method))
  for (const entry of argv.har?.log?.entries ?? []) {
    if (typeof entry?.request?.method === 'string') methods.push(entry.request.method)
  }
  return methods
}

function statusSummary (result) {
  const codes = Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => `${count} × ${code}`)
  return codes.length === 0 ? 'none' : codes.join(', ')
}

/** autocannon's default -t, in seconds. */
const DEFAULT_TIMEOUT_S = 10

/**
 * Why no request got a response. autocannon counts a timeout among its errors
 * too: when every error was one, the server was there (the connections were
 * made) but slower than the timeout, and asking whether it listens misleads.
 */
function unanswered (result, timeoutS) {
  if (result.timeouts > 0 && result.timeouts >= result.errors) {
    return `every request (${result.timeouts}) timed out: none was answered within ${timeoutS} s. ` +
      `The server may be slower than that for this request; give it longer with -t (autocannon's timeout in seconds, e.g. -t ${Math.max(60, timeoutS * 6)}), or ask for less (fewer connections, -c; a page, ?limit=N)`
  }
  const timedOut = result.timeouts > 0 ? `, ${result.timeouts} of them timeouts after ${timeoutS} s (-t)` : ''
  return `no request got a response (${result.errors} errors${timedOut}): is a server listening at ${result.url}?`
}

/** Whether the run measured the server answering, or only its refusals or its absence. */
function judge (result, timeoutS) {
  const answered = ['1xx', '2xx', '3xx', '4xx', '5xx'].reduce((n, k) => n + (result[k] ?? 0), 0)
  if (answered === 0) return stop(1, unanswered(result, timeoutS))
  if (result['2xx'] + result['3xx'] === 0) {
    return stop(1, `every response was an error status (${statusSummary(result)}): check the URL, the method, the body and the token`)
  }
  process.exitCode = 0
}

function main (args) {
  let argv
  try {
    argv = autocannon.parseArguments(args.map((arg) => (isUrl(arg) ? arg.split(ID).join(HIDDEN_ID) : arg)))
  } catch (error) {
    return stop(2, error.message)
  }
  if (argv !== undefined) {
    const restore = (url) => url.split(HIDDEN_ID).join(ID)
    argv.url = Array.isArray(argv.url) ? argv.url.map(restore) : restore(argv.url) // one URL is a string, several an array
  }
  // autocannon has printed its help or its version; without a usable URL, that was a mistake.
  if (argv === undefined) {
    if (!args.some((arg) => INFO_FLAGS.includes(arg))) process.exitCode = 2
    return
  }
  try {
    extra.addMethods(methodsOf(argv))
    // Worker threads load their own autocannon: each learns the methods from this module as its setupClient.
    if (argv.workers && argv.setupClient === undefined) argv.setupClient = require.resolve('./autocannon-methods.cjs')
  } catch (error) {
    return stop(2, error.message)
  }
  if (argv.onPort) return autocannon.start(argv) // it spawns the server itself; its exit status is autocannon's

  const fail = (error) => stop(1, `autocannon failed: ${error instanceof Error ? error.message : String(error)}`)
  let tracker
  try {
    tracker = autocannon(argv)
  } catch (error) {
    return fail(error)
  }
  if (argv.forever) {
    // Runs until interrupted, with no result to judge; failures still fail.
    tracker.on('error', fail)
    return
  }
  tracker.then((result) => judge(result, Number(argv.timeout ?? DEFAULT_TIMEOUT_S)), fail)
}

main(process.argv.slice(2))
