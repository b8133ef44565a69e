'use strict'
// Let autocannon send request methods outside its fixed list.
//
// autocannon 9 validates the method of every request it builds
// (lib/httpRequestBuilder.js: `if (methods.indexOf(method) < 0) throw ...`)
// against the array exported by lib/httpMethods.js (GET HEAD POST PUT DELETE
// CONNECT OPTIONS TRACE PATCH). The builder keeps a reference to that very
// array, so pushing onto it (it is one shared object in the require cache) is
// enough; nothing is forked or copied.
//
// Methods added: env AUTOCANNON_EXTRA_METHODS (comma separated, e.g.
// "UPDATE,FOO"), otherwise "UPDATE". More can be added at run time with
// `require('./autocannon-methods.cjs').addMethods(['BAR'])`.
//
// Where it must run, and how each way of using autocannon gets it:
//
// * CLI:  node --require ./bench/autocannon-methods.cjs node_modules/.bin/autocannon -m UPDATE http://127.0.0.1:PORT/...
// * Programmatic API: require this module (from ESM: createRequire(import.meta.url)),
//   then call autocannon. The order does not matter for the main thread,
//   because autocannon only consults the list when it builds a request.
// * `workers` option: each worker thread has its own module registry, hence its
//   own copy of httpMethods.js, and it builds the requests. Three things make
//   sure the worker gets the methods too:
//     1. Worker threads inherit process.execArgv, so a `--require` of this file
//        runs again inside every worker (the CLI case above).
//     2. When this module is loaded before autocannon's lib/manager.js (which
//        captures `Worker` from lib/worker_threads.js when it is loaded), it
//        puts a Worker subclass in that cache entry which adds
//        `--require <this file>` to the worker's execArgv. The list reaches
//        the worker through AUTOCANNON_EXTRA_METHODS, which addMethods keeps
//        current in process.env (a worker's env is a copy of it).
//     3. When it is loaded too late for 2 (autocannon was required first), pass
//        this file as autocannon's `setupClient` option:
//          { workers: 2, setupClient: require.resolve('./autocannon-methods.cjs') }
//        The worker requires the setupClient module before building any
//        request; this module's export is a no-op setupClient function.
//
// Resolution: autocannon is found from this file's directory, then from the
// current working directory (the same node_modules/autocannon the caller uses
// in this repository). Load it via the repository path bench/autocannon-methods.cjs;
// it is plain CommonJS and not compiled by tsc.

const path = require('node:path')

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/ // RFC 9110 token, the grammar of a method

function resolveAutocannonFile (file) {
  const tries = [{ paths: [__dirname] }, { paths: [process.cwd()] }]
  let lastError
  for (const options of tries) {
    try {
      return require.resolve(`autocannon/${file}`, options)
    } catch (error) {
      lastError = error
    }
  }
  throw lastError
}

const methodsFile = resolveAutocannonFile('lib/httpMethods.js')
/** @type {string[]} autocannon's own array, the one its request builder checks. */
const methods = require(methodsFile)

function parseList (text) {
  return String(text).split(',').map((m) => m.trim()).filter((m) => m !== '')
}

const builtIn = methods.slice()
/** The methods this module added, kept in process.env.AUTOCANNON_EXTRA_METHODS as well. */
const added = []

/**
 * Adds methods to autocannon's list (idempotent); returns the full list.
 * The environment variable is updated too, so worker threads (whose env is a
 * copy of process.env taken when they start) and child processes that load
 * this module get the same list.
 */
function addMethods (extra) {
  for (const method of extra) {
    if (!TOKEN.test(method)) throw new Error(`autocannon-methods: ${JSON.stringify(method)} is not a valid HTTP method token`)
    if (!methods.includes(method)) methods.push(method)
    if (!builtIn.includes(method) && !added.includes(method)) added.push(method)
  }
  if (added.length > 0) process.env.AUTOCANNON_EXTRA_METHODS = added.join(',')
  return methods
}

const fromEnv = process.env.AUTOCANNON_EXTRA_METHODS
addMethods(fromEnv === undefined || fromEnv.trim() === '' ? ['UPDATE'] : parseList(fromEnv))

// Worker threads: see 2. above.
function patchWorkers () {
  let workerThreadsFile
  let managerFile
  try {
    workerThreadsFile = resolveAutocannonFile('lib/worker_threads.js')
    managerFile = resolveAutocannonFile('lib/manager.js')
  } catch {
    return false
  }
  if (require.cache[managerFile] !== undefined) return false // too late: manager already holds the real Worker
  const real = require(workerThreadsFile)
  if (typeof real.Worker !== 'function' || real.Worker.autocannonMethodsPatched === true) return true
  const self = __filename
  class Worker extends real.Worker {
    constructor (filename, options = {}) {
      const execArgv = options.execArgv ?? process.execArgv
      const hasUs = execArgv.some((arg, i) =>
        path.resolve(arg.startsWith('--require=') ? arg.slice('--require='.length) : arg) === self &&
        (arg.startsWith('--require=') || execArgv[i - 1] === '--require' || execArgv[i - 1] === '-r'))
      // The method list reaches the worker through its env, a copy of
      // process.env by default (addMethods keeps the variable current).
      super(filename, { ...options, execArgv: hasUs ? execArgv : [...execArgv, '--require', self] })
    }
  }
  Worker.autocannonMethodsPatched = true
  const cached = require.cache[workerThreadsFile]
  if (cached === undefined) return false
  cached.exports = { ...real, Worker }
  return true
}
const workersPatched = patchWorkers()

/** A no-op setupClient, so this file can be given as autocannon's `setupClient` path (see 3. above). */
function setupClient (_client) {}

module.exports = setupClient
module.exports.setupClient = setupClient
module.exports.addMethods = (list) => addMethods(typeof list === 'string' ? parseList(list) : list)
module.exports.methods = methods
module.exports.methodsFile = methodsFile
module.exports.workersPatched = workersPatched
