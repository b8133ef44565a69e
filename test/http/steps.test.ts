// The connection's step function (src/http/connection/steps.ts), walked cell
// by cell: for every way the reading can stand (asking, held, paused; waiting
// for a turn or not; a streamed body's reader full or not) and every fact
// that can hold the reading, each input lands where the rules below say, with
// the effects they say. The rules are written here again, from what the
// flow means, rather than read from the code, as lifecycle.test.ts does for
// the table. Then the walks a connection takes, and a check that the
// connection writes nothing of its record itself.

import t from "tap";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Deadlines } from "../../src/http/connection/deadlines.js";
import { State, STATE_NAMES } from "../../src/http/connection/lifecycle.js";
import { DEFAULT_CONNECTION_OPTIONS } from "../../src/http/connection/options.js";
import {
  ASK,
  AWAITING_CONTINUE,
  BEGUN,
  BUSY,
  END_OUTPUT,
  FULL,
  HAND_OVER,
  HOLDS_NEXT,
  IN_BODY,
  Input,
  NEED_DRAIN,
  newConnectionState,
  PAUSE_SOCKET,
  QUEUING,
  Reading,
  REFUSED,
  RESUME_SOCKET,
  SENDING,
  SPENT,
  step,
  STREAMED_BODY,
  THEN_ASKED,
  WAIT_TURN,
  type ConnectionState,
} from "../../src/http/connection/steps.js";
import { REQUESTS_PER_TURN } from "../../src/http/connection/turns.js";
import { ROOT } from "../helpers/root.js";

const READINGS = [Reading.Asking, Reading.Held, Reading.Paused];
const READING_NAMES = ["Asking", "Held", "Paused"];
const OPEN = [State.Idle, State.Head, State.Body, State.Busy, State.Draining];
const SHUT = [State.Closing, State.HandedOver, State.Closed];
/** The facts that hold the reading of a plain (not streamed) body or a next request. */
const HOLDING = [SENDING, NEED_DRAIN, FULL, HOLDS_NEXT];

function record(life: State, reading: Reading, yielded = false, bodyFull = false): ConnectionState {
  const s = newConnectionState(new Deadlines(DEFAULT_CONNECTION_OPTIONS));
  Object.assign(s, { life, reading, yielded, bodyFull, turnRequests: 7 });
  return s;
}

/** Every combination of the bits in `bits`. */
function subsets(bits: readonly number[]): number[] {
  const out: number[] = [];
  for (let m = 0; m < 1 << bits.length; m++) out.push(bits.reduce((acc, bit, i) => (m & (1 << i) ? acc | bit : acc), 0));
  return out;
}

/** The rule of reading, from what it means: whether anything holds it now. */
function holds(facts: number, yielded: boolean, bodyFull: boolean): boolean {
  if (yielded) return true; // a connection that waits its turn reads nothing until it comes
  if (facts & STREAMED_BODY) return bodyFull; // a streamed body: only its reader's room
  return HOLDING.some((bit) => (facts & bit) !== 0);
}

t.test("Flow, in every cell: held while anything holds it; when nothing does, it asks again, and a paused socket waits until the held bytes are read", async (t) => {
  let cells = 0;
  for (const life of [...OPEN, ...SHUT]) {
    for (const reading of READINGS) {
      for (const yielded of [false, true]) {
        for (const bodyFull of [false, true]) {
          for (const facts of subsets([STREAMED_BODY, ...HOLDING])) {
            const s = record(life, reading, yielded, bodyFull);
            const effects = step(s, Input.Flow, facts);
            const cell = `${STATE_NAMES[life]}, ${READING_NAMES[reading]}${yielded ? ", yielded" : ""}${bodyFull ? ", reader full" : ""}, facts ${facts}`;
            cells++;
            if (SHUT.includes(life)) {
              // A closing connection reads (and drops) whatever comes: nothing holds it, and nothing is asked.
              if (effects !== 0 || s.reading !== reading) t.fail(`${cell}: a shut connection changes nothing`);
              continue;
            }
            if (holds(facts, yielded, bodyFull)) {
              const want = reading === Reading.Asking ? Reading.Held : reading;
              if (effects !== 0 || s.reading !== want) t.fail(`${cell}: held (${READING_NAMES[want]}), no effect; got ${READING_NAMES[s.reading]}, effects ${effects}`);
            } else {
              const want = reading === Reading.Asking ? 0 : reading === Reading.Held ? ASK : ASK | THEN_ASKED;
              if (effects !== want || s.reading !== Reading.Asking) t.fail(`${cell}: asking, effects ${want}; got ${READING_NAMES[s.reading]}, effects ${effects}`);
              if (reading !== Reading.Asking && s.turnRequests !== 0) t.fail(`${cell}: a resumption starts a turn's count`);
            }
          }
        }
      }
    }
  }
  t.equal(cells, 8 * 3 * 2 * 2 * 32);
  t.pass(`${cells} cells`);
});

t.test("Asked: after the held bytes are read, the socket reads again only if nothing held the reading meanwhile", async (t) => {
  const asking = record(State.Busy, Reading.Asking);
  t.equal(step(asking, Input.Asked), RESUME_SOCKET);
  t.equal(asking.reading, Reading.Asking);
  for (const reading of [Reading.Held, Reading.Paused]) {
    const s = record(State.Busy, reading);
    t.equal(step(s, Input.Asked), 0, `${READING_NAMES[reading]}: the socket stays paused`);
    t.equal(s.reading, Reading.Paused, "and is said to be");
  }
});

t.test("Read, in every cell: a read behind a held parser pauses the socket; the turns' word makes it wait for a turn", async (t) => {
  for (const life of OPEN) {
    for (const reading of READINGS) {
      for (const yielded of [false, true]) {
        for (const facts of subsets([SPENT, QUEUING])) {
          const s = record(life, reading, yielded);
          const effects = step(s, Input.Read, facts);
          const cell = `${STATE_NAMES[life]}, ${READING_NAMES[reading]}${yielded ? ", yielded" : ""}, facts ${facts}`;
          const waits = !yielded && (facts & (SPENT | QUEUING)) !== 0;
          // Held before the read, or held by the wait it starts, with the turn's bytes spent: the socket stops now.
          const heldNow = reading === Reading.Held || (reading === Reading.Asking && waits);
          const pauses = reading === Reading.Held || (heldNow && (facts & SPENT) !== 0);
          const wantReading = pauses ? Reading.Paused : heldNow ? Reading.Held : reading;
          const wantEffects = (pauses ? PAUSE_SOCKET : 0) | (waits ? WAIT_TURN : 0);
          t.equal(effects, wantEffects, `${cell}: effects`);
          t.equal(s.reading, wantReading, `${cell}: ${READING_NAMES[wantReading]}`);
          t.equal(s.yielded, yielded || waits, `${cell}: waiting for a turn`);
          t.equal(s.turnRequests, 0, `${cell}: a read starts the turn's count`);
        }
      }
    }
  }
});

t.test("Request: the connection yields after REQUESTS_PER_TURN requests of one read, and reads on when its turn comes", async (t) => {
  const s = record(State.Busy, Reading.Asking);
  step(s, Input.Read, 0);
  for (let i = 1; i < REQUESTS_PER_TURN; i++) t.equal(step(s, Input.Request), 0);
  t.equal(step(s, Input.Request), WAIT_TURN, `the ${REQUESTS_PER_TURN}th waits for a turn`);
  t.equal(s.reading, Reading.Held);
  t.equal(step(s, Input.Flow, 0), 0, "nothing else held it, but the turn is awaited");
  t.equal(step(s, Input.TurnCame, 0), ASK, "the turn came: ask again");
  t.equal(s.reading, Reading.Asking);
  t.equal(s.yielded, false);
  t.equal(s.turnRequests, 0);
});

t.test("BodyRoom: a streamed body's reader full holds the reading, room resumes it; a new reader starts with room", async (t) => {
  const s = record(State.Body, Reading.Asking);
  t.equal(step(s, Input.BodyRoom, STREAMED_BODY | FULL, 1), 0);
  t.equal(s.reading, Reading.Held, "full: held, whatever else (FULL here) says");
  t.equal(step(s, Input.BodyRoom, STREAMED_BODY | FULL, 1), 0, "told again: nothing changes");
  t.equal(step(s, Input.BodyRoom, STREAMED_BODY | FULL, 0), ASK, "room: asked again, FULL does not hold a body's reading");
  step(s, Input.BodyRoom, STREAMED_BODY, 1);
  t.equal(step(s, Input.BodyReader), 0);
  t.equal(s.bodyFull, false);
});

/** What the connection waits for, from what the parser and the queue say: the rule, independently. */
function awaited(facts: number, held: boolean): State {
  if (facts & IN_BODY) return facts & AWAITING_CONTINUE || held ? State.Busy : State.Body;
  if (facts & BEGUN) return held ? State.Busy : State.Head;
  return facts & BUSY ? State.Busy : State.Idle;
}

t.test("Settled, in every cell: the state is what the connection waits for; a shut connection does not move", async (t) => {
  for (const life of [...OPEN, ...SHUT]) {
    for (const reading of READINGS) {
      for (const facts of subsets([IN_BODY, AWAITING_CONTINUE, BEGUN, BUSY])) {
        if (facts & IN_BODY && facts & BEGUN) continue; // the connection says one or the other
        const s = record(life, reading);
        step(s, Input.Settled, facts);
        const cell = `${STATE_NAMES[life]}, ${READING_NAMES[reading]}, facts ${facts}`;
        const waits = awaited(facts, reading !== Reading.Asking);
        let want: State;
        if (SHUT.includes(life)) want = life;
        else if (life === State.Draining) want = waits === State.Idle ? State.Closing : State.Draining; // nothing left: close
        else want = waits;
        t.equal(STATE_NAMES[s.life], STATE_NAMES[want], cell);
      }
    }
  }
});

t.test("entering Closing or HandedOver lets the socket read, and says so; what comes after is refused", async (t) => {
  for (const reading of READINGS) {
    const s = record(State.Busy, reading);
    const effects = step(s, Input.Close);
    t.equal(effects, END_OUTPUT | (reading === Reading.Paused ? RESUME_SOCKET : 0), `${READING_NAMES[reading]}: the output ends, a paused socket resumes`);
    t.equal(s.life, State.Closing);
    t.equal(s.reading, Reading.Asking);
    t.equal(step(s, Input.Close), REFUSED, "a second close is refused");
    t.equal(step(s, Input.Flow, FULL), 0, "and a closing connection is never held");
    const h = record(State.Head, reading);
    t.equal(step(h, Input.HandOver), HAND_OVER | (reading === Reading.Paused ? RESUME_SOCKET : 0));
    t.equal(step(h, Input.Sweep, 0, 0, Date.now() + 10 * 60 * 60 * 1000), 0, "a socket handed over is timed by nobody");
  }
  const idle = record(State.Idle, Reading.Asking);
  t.equal(step(idle, Input.Shutdown, 0), END_OUTPUT, "a shutdown closes an idle connection at once");
  const busy = record(State.Busy, Reading.Held);
  t.equal(step(busy, Input.HalfClose, BUSY | FULL), 0, "a half-close of a busy one drains it");
  t.equal(busy.life, State.Draining);
  t.equal(step(busy, Input.Settled, 0), END_OUTPUT, "and it closes once nothing is left");
});

t.test("a walk: a pipelined read held behind its answers, the client's next read paused in the kernel, then all of it read", async (t) => {
  const s = record(State.Idle, Reading.Asking);
  t.equal(step(s, Input.Read, 0), 0, "a read of ten requests");
  t.equal(step(s, Input.Request), 0);
  t.equal(step(s, Input.Flow, BUSY | FULL), 0, "the first answer in the making: held");
  t.equal(s.reading, Reading.Held);
  step(s, Input.Settled, BUSY | FULL | BEGUN);
  t.equal(STATE_NAMES[s.life], "Busy", "bytes held by the server are not a slow client");
  t.equal(step(s, Input.Read, 0), PAUSE_SOCKET, "the next read arrives: the socket pauses");
  t.equal(step(s, Input.Flow, BUSY), ASK | THEN_ASKED, "the answer is out: ask for what is held");
  t.equal(step(s, Input.Flow, BUSY | FULL), 0, "the next answer in the making, while asking");
  t.equal(step(s, Input.Asked), 0, "so the socket stays paused");
  t.equal(s.reading, Reading.Paused);
  t.equal(step(s, Input.Flow, 0), ASK | THEN_ASKED);
  t.equal(step(s, Input.Asked), RESUME_SOCKET, "all read, nothing held it again: the socket reads");
  step(s, Input.Settled, 0);
  t.equal(STATE_NAMES[s.life], "Idle");
});

t.test("the connection writes nothing of its record itself: every change goes through step()", async (t) => {
  const connection = readFileSync(path.join(ROOT, "src", "http", "connection", "connection.ts"), "utf8");
  t.notMatch(connection, /this\.s\.\w+\s*(=[^=]|\+\+|--|\+=|-=)/, "no assignment to this.s.<field> in connection.ts");
  t.match(connection, /step\(this\.s, input, facts, arg, now\)/, "the one call of step()");
});
