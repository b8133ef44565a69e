// The connection's lifecycle table (src/http/connection/lifecycle.ts), walked
// whole: every legal move lands where the rules below say, and every other
// event is refused, in every state. The rules are written here again, from
// what the states mean, rather than read from the table. Then the walks a
// connection takes, and a check that the connection changes its state only
// through the table.

import t from "tap";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Event, EVENT_NAMES, EVENTS, next, State, STATE_NAMES, STATES, TABLE } from "../../src/http/connection/lifecycle.js";
import { ROOT } from "../helpers/root.js";

const WAITS: Record<number, State> = { [Event.Idle]: State.Idle, [Event.Head]: State.Head, [Event.Body]: State.Body, [Event.Busy]: State.Busy };

/** The rules, from the meaning of the states; undefined: refused. */
function expected(state: State, event: Event): State | undefined {
  if (state === State.Closed) return undefined; // nothing leaves Closed
  if (event === Event.SocketClosed) return State.Closed; // the socket can close in any other state
  if (state === State.Closing) return undefined; // the output is ended: only the socket's close matters now
  if (state === State.HandedOver) return undefined; // the socket is another protocol's: only its close is heard
  if (event === Event.HandOver) return State.HandedOver; // switching protocols answers the request, from any open state
  if (event === Event.Close) return State.Closing; // a closing response (or nothing) ends any open state
  if (state === State.Draining) {
    if (event === Event.Idle) return State.Closing; // nothing left to answer: close
    if (event in WAITS || event === Event.HalfClose) return State.Draining; // still answering; the client may half-close too
    return undefined; // a second shutdown
  }
  // Open: what it waits for, freely; shutdown and half-close close an idle connection and drain a busy one.
  if (event in WAITS) return WAITS[event];
  if (event === Event.Shutdown || event === Event.HalfClose) return state === State.Idle ? State.Closing : State.Draining;
  return undefined;
}

t.test("the table is a table: one row per state, one column per event", async (t) => {
  t.equal(TABLE.length, STATES);
  for (const row of TABLE) t.equal(row.length, EVENTS);
  t.equal(STATE_NAMES.length, STATES);
  t.equal(EVENT_NAMES.length, EVENTS);
});

t.test("every state x event: the legal moves land where the rules say, every other event is refused", async (t) => {
  let legal = 0;
  let refused = 0;
  for (let s = 0; s < STATES; s++) {
    for (let e = 0; e < EVENTS; e++) {
      const want = expected(s as State, e as Event);
      const got = next(s as State, e as Event);
      const move = `${STATE_NAMES[s]} x ${EVENT_NAMES[e]}`;
      if (want === undefined) {
        t.equal(got, -1, `${move}: refused`);
        refused++;
      } else {
        t.equal(got, want, `${move} -> ${STATE_NAMES[want]}`);
        legal++;
      }
    }
  }
  t.equal(legal + refused, STATES * EVENTS);
  t.ok(refused > 0 && legal > 0);
});

/** Apply events in turn; the states passed through, or where it was refused. */
function walk(from: State, events: Event[]): string[] {
  const seen: string[] = [STATE_NAMES[from]];
  let state = from;
  for (const event of events) {
    const to = next(state, event);
    if (to === -1) {
      seen.push(`refused ${EVENT_NAMES[event]}`);
      continue;
    }
    state = to;
    seen.push(STATE_NAMES[state]);
  }
  return seen;
}

t.test("the walks a connection takes", async (t) => {
  t.same(walk(State.Idle, [Event.Head, Event.Body, Event.Busy, Event.Idle]), ["Idle", "Head", "Body", "Busy", "Idle"], "a keep-alive exchange");
  t.same(walk(State.Idle, [Event.Head, Event.Busy, Event.Head, Event.Busy, Event.Idle]), ["Idle", "Head", "Busy", "Head", "Busy", "Idle"], "pipelined: the next head arrives while the first is answered");
  t.same(walk(State.Busy, [Event.Close, Event.Head, Event.HalfClose, Event.SocketClosed]), ["Busy", "Closing", "refused Head", "refused HalfClose", "Closed"], "a closing response: the client's later bytes and half-close change nothing");
  t.same(walk(State.Idle, [Event.Shutdown, Event.SocketClosed]), ["Idle", "Closing", "Closed"], "shutdown of an idle connection closes it at once");
  t.same(
    walk(State.Busy, [Event.Shutdown, Event.Head, Event.Busy, Event.Shutdown, Event.Idle]),
    ["Busy", "Draining", "Draining", "Draining", "refused Shutdown", "Closing"],
    "shutdown of a busy one: it answers what it has, then closes",
  );
  t.same(
    walk(State.Head, [Event.Shutdown, Event.Head, Event.Close, Event.SocketClosed]),
    ["Head", "Draining", "Draining", "Closing", "Closed"],
    "shutdown in the middle of a head: still read (and timed, by the Head event: deadlines.ts); the 408 of its timeout closes",
  );
  t.same(walk(State.Head, [Event.HalfClose, Event.Idle]), ["Head", "Draining", "Closing"], "half-close in the middle of a head: it is dropped, nothing is left, close");
  t.same(walk(State.Busy, [Event.Shutdown, Event.HalfClose, Event.Busy, Event.Close]), ["Busy", "Draining", "Draining", "Draining", "Closing"], "shutdown, then the client half-closes too");
  t.same(walk(State.Head, [Event.SocketClosed, Event.Idle, Event.Close, Event.SocketClosed]), ["Head", "Closed", "refused Idle", "refused Close", "refused SocketClosed"], "a reset: nothing moves after it");
  t.same(
    walk(State.Idle, [Event.Head, Event.HandOver, Event.Busy, Event.Idle, Event.Close, Event.Shutdown, Event.HalfClose, Event.HandOver, Event.SocketClosed]),
    ["Idle", "Head", "HandedOver", "refused Busy", "refused Idle", "refused Close", "refused Shutdown", "refused HalfClose", "refused HandOver", "Closed"],
    "an upgrade: once handed over, the connection neither times, answers, drains nor closes the socket; only its close is heard",
  );
  t.same(walk(State.Busy, [Event.Shutdown, Event.HandOver, Event.SocketClosed]), ["Busy", "Draining", "HandedOver", "Closed"], "a shutdown lets the request begun before it switch protocols");
  t.same(walk(State.Busy, [Event.Close, Event.HandOver]), ["Busy", "Closing", "refused HandOver"], "a closing connection hands nothing over");
});

t.test("the connection changes its state only through the table", async (t) => {
  // The state lives in the connection's record (steps.ts), and step() moves it in one place, move(), to the table's answer.
  const steps = readFileSync(path.join(ROOT, "src", "http", "connection", "steps.ts"), "utf8");
  const assignments = steps.match(/\.life\s*=[^=]/g) ?? [];
  t.equal(assignments.length, 1, "one assignment of the state, in move()");
  t.match(steps, /const to = next\(s\.life, event\);\s*if \(to === -1\) return REFUSED;\s*s\.life = to;/, "and it is the table's answer");
  const connection = readFileSync(path.join(ROOT, "src", "http", "connection", "connection.ts"), "utf8");
  t.notMatch(connection, /\.life\s*=[^=]/, "the connection assigns no state of its own");
});
