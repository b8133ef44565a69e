// The response's base class: node's legacy Stream (what node's own
// OutgoingMessage extends), with the emitter's fields made for less.
//
// Stream's constructor is EventEmitter.init, which gives each emitter its
// table of listeners as `{ __proto__: null }`: an object V8 makes a
// dictionary, about 200 bytes, for every response, though most responses
// of a bare listener never get a listener at all. Here the constructor sets
// the same three fields itself, and the table is made by a constructor of
// its own (ListenerTable, below), which V8 keeps fast (about 40 bytes
// empty, 170 less) and makes without a call into its runtime: an object
// given a null prototype by setPrototypeOf, as it was before, cost a
// change of prototype and of hidden class for every response (about 230
// instructions). EventEmitter's methods read nothing else that
// init sets: its capture-rejections flag is found on EventEmitter.prototype
// instead (the value init would copy), and its shape flag, which init sets
// only when a table is already there, stays unset, so that a listener
// removed is deleted and announced ('removeListener') as on node's
// responses. Readable, the request's base, makes a fast table of its own.
// test/node/stream-base.test.ts holds a response's events against a Stream's.

import { Stream } from "node:stream";

interface EmitterFields {
  _events: Record<string | symbol, unknown>;
  _eventsCount: number;
  _maxListeners: number | undefined;
}

/**
 * A table of listeners in which no event name meets a member of
 * Object.prototype ("toString", "constructor", "__proto__", ...), as in
 * node's `{ __proto__: null }`: its prototype is an empty object without a
 * prototype, frozen, so nothing is found through it and nothing can be
 * added to it (a name stored is the table's own, "__proto__" too, since no
 * accessor of that name is on the chain).
 */
function ListenerTable(): void {}
ListenerTable.prototype = Object.freeze(Object.create(null) as object);

function StreamBase(this: EmitterFields): void {
  this._events = new (ListenerTable as unknown as new () => Record<string | symbol, unknown>)();
  this._eventsCount = 0;
  this._maxListeners = undefined;
}
StreamBase.prototype = Stream.prototype;

/** Stream, as a class to extend: instances are Streams (and EventEmitters) by their prototype chain. */
export const LeanStream = StreamBase as unknown as typeof Stream;
