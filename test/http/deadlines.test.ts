// A connection's deadlines (src/http/connection/deadlines.ts), driven through
// the states the connection enters (and the events that move it there) and
// checked at chosen instants: no clock is waited for.

import t from "tap";
import { Deadlines, Expired } from "../../src/http/connection/deadlines.js";
import { Event, State } from "../../src/http/connection/lifecycle.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";

const options = { ...DEFAULT_CONNECTION_OPTIONS, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 60_000 };

t.test("the whole-request deadline survives the server pausing mid-head", async (t) => {
  const d = new Deadlines(options);
  const start = Date.now();
  d.enter(State.Head, Event.Head, true, 0); // the head's first bytes
  d.enter(State.Busy, Event.Busy, false, 0); // the server pauses reading (a turn, back-pressure)
  d.enter(State.Head, Event.Head, false, 0); // and reads on: the same head
  t.equal(d.check(start + 500, 0), Expired.Nothing, "inside the deadline");
  t.equal(d.check(Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request, "past it, counted from the head's first byte");
});

t.test("the whole-request deadline survives a pause mid-body, and covers head and body together", async (t) => {
  const d = new Deadlines(options);
  d.enter(State.Head, Event.Head, true, 0);
  d.enter(State.Body, Event.Body, true, 1); // the head is whole: request 1's body
  d.enter(State.Busy, Event.Busy, false, 1);
  d.enter(State.Body, Event.Body, true, 1);
  t.equal(d.check(Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request);
});

t.test("the next request gets a deadline of its own, from its own first byte", async (t) => {
  const d = new Deadlines(options);
  d.enter(State.Head, Event.Head, true, 0);
  d.enter(State.Busy, Event.Busy, false, 1); // request 1 is whole, with its handler
  const later = Date.now() + 5 * options.requestTimeoutMs;
  t.equal(d.check(later, 0), Expired.Nothing, "a request being answered is not timed as being read");
  d.enter(State.Idle, Event.Idle, false, 1);
  d.enter(State.Head, Event.Head, true, 1); // request 2 begins
  const begun = Date.now();
  t.equal(d.check(begun + options.requestTimeoutMs - 1, 0), Expired.Nothing, "request 2 is not charged for request 1's time");
  t.equal(d.check(Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request);
});

t.test("the headers deadline is set once per head: the server's pauses do not extend it", async (t) => {
  const d = new Deadlines({ ...options, requestTimeoutMs: 600_000, headersTimeoutMs: 1_000 });
  d.enter(State.Head, Event.Head, true, 0);
  d.enter(State.Busy, Event.Busy, false, 0);
  d.enter(State.Head, Event.Head, true, 0);
  t.equal(d.check(Date.now() + 1_001, 0), Expired.Head);
});

t.test("a send that makes no progress for the send timeout is stalled; progress restarts it", async (t) => {
  const d = new Deadlines({ ...options, sendTimeoutMs: 1_000 });
  const now = Date.now();
  t.equal(d.check(now, 5000), Expired.Nothing);
  t.equal(d.check(now + 900, 4000), Expired.Nothing, "progress");
  t.equal(d.check(now + 1_800, 4000), Expired.Nothing, "no progress yet, but within the timeout of the last progress");
  t.equal(d.check(now + 1_901, 4000), Expired.SendStalled);
  t.equal(d.check(now + 2_000, 0), Expired.SendDone, "all out");
});

t.test("draining is timed by what it waits for: a head begun before the shutdown keeps its headers deadline", async (t) => {
  const d = new Deadlines({ ...options, headersTimeoutMs: 1_000, requestTimeoutMs: 600_000 });
  d.enter(State.Head, Event.Head, true, 0);
  const deadline = d.at;
  d.enter(State.Draining, Event.Shutdown, false, 0); // the shutdown itself
  t.equal(d.at, deadline, "the shutdown changes nothing");
  d.enter(State.Draining, Event.Head, false, 0); // what update() finds next: the head is still awaited
  d.enter(State.Draining, Event.Head, true, 0); // a trickled byte
  t.equal(d.at, deadline, "neither the shutdown nor a trickled byte extends it");
  t.equal(d.check(deadline - 1, 0), Expired.Nothing);
  t.equal(d.check(deadline, 0), Expired.Head);
});

t.test("draining is timed by what it waits for: a body's timer runs on through the shutdown, and data restarts it", async (t) => {
  const d = new Deadlines({ ...options, bodyTimeoutMs: 1_000, requestTimeoutMs: 600_000 });
  d.enter(State.Head, Event.Head, true, 0);
  d.enter(State.Body, Event.Body, true, 1);
  const deadline = d.at;
  d.enter(State.Draining, Event.Shutdown, false, 1);
  d.enter(State.Draining, Event.Body, false, 1);
  t.equal(d.at, deadline, "not restarted by the shutdown");
  t.equal(d.check(deadline, 0), Expired.Body);
  d.enter(State.Draining, Event.Body, true, 1);
  t.ok(d.at >= deadline, "restarted by a chunk");
});

t.test("draining is timed by what it waits for: the whole-request deadline too, and the server's own work not at all", async (t) => {
  const d = new Deadlines(options);
  d.enter(State.Head, Event.Head, true, 0);
  d.enter(State.Draining, Event.Shutdown, false, 0);
  d.enter(State.Draining, Event.Body, true, 1);
  t.equal(d.check(Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request, "from the request's first byte, before the shutdown");
  d.enter(State.Draining, Event.Busy, false, 1); // the request is whole, with its handler
  t.equal(d.at, Infinity);
  t.equal(d.check(Date.now() + 100 * options.requestTimeoutMs, 0), Expired.Nothing, "an answer in the making is not timed as a request being read");
});
