// Why the request's and response's members are their own properties.
//
// Express 5 gives each request and response a new prototype
// (Object.setPrototypeOf(req, app.request), whose chain ends in
// http.IncomingMessage.prototype; the response's in http.ServerResponse.prototype),
// and other code checks `instanceof` against node's classes. A member found
// on a class prototype of ours would be lost to the swap, and node's own
// would answer instead: node's end() and write() frame and write bytes
// themselves, into a socket whose bytes are the engine's. So every member
// node's prototypes define is set on each instance, before any framework
// sees it: a method of ours, a field kept up to date (data, not accessors:
// accessors defined on each instance cost more than the request's other
// members together), or one that throws to
// say that node's feature is not offered here (all but two accessors node
// deprecated, DEP0066: its `_headers` reads our getHeaders(), and its
// `_headerNames` throws). Properties are looked up on
// the object before its prototype, whichever prototype it is given.
// test/node/prototype-swap.test.ts holds the list against node's.
