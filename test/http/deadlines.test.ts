// A connection's deadlines (src/http/connection/deadlines.ts), driven through
// the states the connection enters and checked at chosen instants: no clock
// is waited for.

import t from "tap";
import { Deadlines, Expired } from "../../src/http/connection/deadlines.js";
import { State } from "../../src/http/connection/lifecycle.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";

const options = { ...DEFAULT_CONNECTION_OPTIONS, headersTimeoutMs: 60_000, bodyTimeoutMs: 60_000, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 60_000 };

t.test("the whole-request deadline survives the server pausing mid-head", async (t) => {
  const d = new Deadlines(options);
  const start = Date.now();
  d.enter(State.Idle, State.Head, true, 0); // the head's first bytes
  d.enter(State.Head, State.Busy, false, 0); // the server pauses reading (a turn, back-pressure)
  d.enter(State.Busy, State.Head, false, 0); // and reads on: the same head
  t.equal(d.check(State.Head, start + 500, 0), Expired.Nothing, "inside the deadline");
  t.equal(d.check(State.Head, Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request, "past it, counted from the head's first byte");
});

t.test("the whole-request deadline survives a pause mid-body, and covers head and body together", async (t) => {
  const d = new Deadlines(options);
  d.enter(State.Idle, State.Head, true, 0);
  d.enter(State.Head, State.Body, true, 1); // the head is whole: request 1's body
  d.enter(State.Body, State.Busy, false, 1);
  d.enter(State.Busy, State.Body, true, 1);
  t.equal(d.check(State.Body, Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request);
});

t.test("the next request gets a deadline of its own, from its own first byte", async (t) => {
  const d = new Deadlines(options);
  d.enter(State.Idle, State.Head, true, 0);
  d.enter(State.Head, State.Busy, false, 1); // request 1 is whole, with its handler
  const later = Date.now() + 5 * options.requestTimeoutMs;
  t.equal(d.check(State.Busy, later, 0), Expired.Nothing, "a request being answered is not timed as being read");
  d.enter(State.Busy, State.Idle, false, 1);
  d.enter(State.Idle, State.Head, true, 1); // request 2 begins
  const begun = Date.now();
  t.equal(d.check(State.Head, begun + options.requestTimeoutMs - 1, 0), Expired.Nothing, "request 2 is not charged for request 1's time");
  t.equal(d.check(State.Head, Date.now() + options.requestTimeoutMs + 1, 0), Expired.Request);
});

t.test("the headers deadline is set once per head: the server's pauses do not extend it", async (t) => {
  const d = new Deadlines({ ...options, requestTimeoutMs: 600_000, headersTimeoutMs: 1_000 });
  d.enter(State.Idle, State.Head, true, 0);
  d.enter(State.Head, State.Busy, false, 0);
  d.enter(State.Busy, State.Head, true, 0);
  t.equal(d.check(State.Head, Date.now() + 1_001, 0), Expired.State);
});

t.test("a send that makes no progress for the send timeout is stalled; progress restarts it", async (t) => {
  const d = new Deadlines({ ...options, sendTimeoutMs: 1_000 });
  const now = Date.now();
  t.equal(d.check(State.Busy, now, 5000), Expired.Nothing);
  t.equal(d.check(State.Busy, now + 900, 4000), Expired.Nothing, "progress");
  t.equal(d.check(State.Busy, now + 1_800, 4000), Expired.Nothing, "no progress yet, but within the timeout of the last progress");
  t.equal(d.check(State.Busy, now + 1_901, 4000), Expired.SendStalled);
  t.equal(d.check(State.Busy, now + 2_000, 0), Expired.SendDone, "all out");
});
