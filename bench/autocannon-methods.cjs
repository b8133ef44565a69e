'use strict'
// Lets autocannon send request methods outside its fixed list (GET HEAD POST
// PUT DELETE CONNECT OPTIONS TRACE PATCH): its request builder checks each
// method against the array lib/httpMethods.js exports, one shared object, so
// pushing onto it is enough. The methods: env AUTOCANNON_EXTRA_METHODS
// (comma separated), otherwise UPDATE; addMethods() adds more and keeps the
// variable current, so that worker threads (whose env is a copy) add the same.
//
// Worker threads have modules of their own, so each must load this file too:
//   CLI:  node --require ./bench/autocannon-methods.cjs node_modules/autocannon/autocannon.js -m UPDATE -w 2 ...
//         (workers inherit the --require)
//   API:  autocannon({ ..., workers: 2, setupClient: require.resolve('./autocannon-methods.cjs') })
//         (a worker requires its setupClient before building a request; the export is a no-op one)
// load.cjs does the second for `npm run load -- -w N`. Plain CommonJS, not compiled.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/ // RFC 9110 token, the grammar of a method

/** @type {string[]} autocannon's own array, found from this file's directory or the working directory. */
const methods = require(require.resolve('autocannon/lib/httpMethods.js', { paths: [__dirname, process.cwd()] }))
const builtIn = methods.slice()

const parseList = (text) => String(text).split(',').map((m) => m.trim()).filter((m) => m !== '')

/** Adds methods to autocannon's list (idempotent); returns the whole list. */
function addMethods (extra) {
  for (const method of typeof extra === 'string' ? parseList(extra) : extra) {
    if (!TOKEN.test(method)) throw new Error(`autocannon-methods: ${JSON.stringify(method)} is not a valid HTTP method token`)
    if (!methods.includes(method)) methods.push(method)
  }
  const added = methods.filter((m) => !builtIn.includes(m))
  if (added.length > 0) process.env.AUTOCANNON_EXTRA_METHODS = added.join(',')
  return methods
}

const fromEnv = process.env.AUTOCANNON_EXTRA_METHODS
addMethods(fromEnv === undefined || fromEnv.trim() === '' ? ['UPDATE'] : fromEnv)

module.exports = function setupClient (_client) {}
module.exports.addMethods = addMethods
module.exports.methods = methods
