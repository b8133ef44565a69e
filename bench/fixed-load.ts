// A load of an exact number of requests, for measurements that count work
// rather than time (bench/instructions.ts): `connections` sockets share
// `total` requests, each writing `depth` of them at once and the next batch
// once all of that batch's responses are in. Responses are counted by
// reading each head's Content-Length, so a body can never be mistaken for
// the start of the next response.

import net from "node:net";

export interface FixedLoad {
  readonly port: number;
  /**
   * The request's bytes, sent `depth` times back to back per batch; or several
   * requests of one length, sent in turn, so that no head repeats the one
   * before it on its connection.
   */
  readonly request: Buffer | readonly Buffer[];
  readonly total: number;
  readonly connections: number;
  readonly depth: number;
}

const HEAD_END = Buffer.from("\r\n\r\n", "latin1");

/** Counts whole responses in a stream of fixed-length (Content-Length) responses. */
export class ResponseCounter {
  private held = Buffer.alloc(0);
  /** Body bytes still to skip of the response being read. */
  private bodyLeft = 0;

  /** Takes the next bytes; returns how many responses they completed. */
  push(chunk: Buffer): number {
    let buf = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    let done = 0;
    for (;;) {
      if (this.bodyLeft > 0) {
        const skip = Math.min(this.bodyLeft, buf.length);
        this.bodyLeft -= skip;
        buf = buf.subarray(skip);
        if (this.bodyLeft > 0) break;
        done++;
        continue;
      }
      const end = buf.indexOf(HEAD_END);
      if (end === -1) break;
      const head = buf.toString("latin1", 0, end);
      const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (m === null) throw new Error(`a response without Content-Length: ${head.split("\r\n")[0]}`);
      if (!head.startsWith("HTTP/1.1 2")) throw new Error(`not a 2xx response: ${head.split("\r\n")[0]}`);
      buf = buf.subarray(end + HEAD_END.length);
      this.bodyLeft = Number(m[1]);
      if (this.bodyLeft === 0) done++;
    }
    this.held = Buffer.from(buf);
    return done;
  }
}

/** Sends the load and resolves once every response arrived; rejects on a socket error or a bad response. */
export function sendFixedLoad(load: FixedLoad): Promise<void> {
  let unsent = load.total;
  const requests = Buffer.isBuffer(load.request) ? [load.request] : load.request;
  const size = requests[0]!.length;
  if (requests.some((r) => r.length !== size)) throw new Error("fixed load: the requests sent in turn must be of one length");
  // Batches[k] starts with requests[k], so that turns continue across batches whatever the depth.
  const batches = requests.map((_, k) => Buffer.concat(Array.from({ length: load.depth }, (_, i) => requests[(k + i) % requests.length]!)));
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(load.port, "127.0.0.1");
      const counter = new ResponseCounter();
      let awaited = 0;
      let turn = 0;
      let finished = false;
      const next = () => {
        const n = Math.min(load.depth, unsent);
        if (n === 0) {
          finished = true;
          socket.end();
          resolve();
          return;
        }
        unsent -= n;
        awaited = n;
        const batch = batches[turn]!;
        turn = (turn + load.depth) % batches.length;
        socket.write(n === load.depth ? batch : batch.subarray(0, n * size));
      };
      socket.setNoDelay(true);
      socket.on("connect", next);
      socket.on("data", (chunk: Buffer) => {
        try {
          awaited -= counter.push(chunk);
        } catch (error) {
          socket.destroy();
          reject(error as Error);
          return;
        }
        if (awaited === 0) next();
      });
      socket.on("error", reject);
      // A connection the server closes under the load would otherwise leave it waiting for ever.
      socket.on("close", () => finished || reject(new Error(`the server closed a connection with ${awaited} of its responses still to come (${unsent} requests not sent)`)));
    });
  return Promise.all(Array.from({ length: load.connections }, one)).then(() => undefined);
}
