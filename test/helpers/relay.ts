// A byte relay on 127.0.0.1 in front of a backend, recording what each
// connection sent to the backend: put between a proxy and startline, it shows
// the bytes the proxy actually forwarded. Half-closes are passed on, so the
// backend still reads (and answers) everything it was sent before a close.

import net from "node:net";
import { once } from "node:events";

export interface RelayedConnection {
  /** Bytes from the proxy to the backend, so far. */
  readonly sent: Buffer[];
  /** Resolves when both sides have closed: the backend has read, handled and answered all of `sent`. */
  readonly done: Promise<void>;
}

export interface Relay {
  readonly port: number;
  /** Connections opened since the last call, and forgets them. */
  take(): RelayedConnection[];
  /** How many connections are open now (either side). */
  open(): number;
  close(): Promise<void>;
}

export async function startRelay(backendPort: number): Promise<Relay> {
  let opened: RelayedConnection[] = [];
  const sockets = new Set<net.Socket>();
  let openCount = 0;
  // allowHalfOpen: a proxy that half-closes still gets what startline answers after.
  const server = net.createServer({ allowHalfOpen: true }, (front) => {
    const back = net.connect({ port: backendPort, host: "127.0.0.1", allowHalfOpen: true });
    const sent: Buffer[] = [];
    sockets.add(front).add(back);
    // Not events.once: that rejects on "error", and a reset is a way to close.
    const closed = (s: net.Socket) => new Promise<void>((resolve) => (s.closed ? resolve() : s.once("close", () => resolve())));
    openCount++;
    const done = Promise.all([closed(front), closed(back)]).then(() => {
      sockets.delete(front);
      sockets.delete(back);
      openCount--;
    });
    opened.push({ sent, done });
    front.on("data", (d: Buffer) => {
      sent.push(d);
      back.write(d);
    });
    front.on("end", () => back.end());
    back.on("data", (d: Buffer) => front.write(d));
    back.on("end", () => front.end());
    // A reset by the proxy still lets the backend finish what it was sent; a reset by the backend resets the proxy.
    front.on("error", () => back.end());
    back.on("error", () => front.destroy());
    front.on("close", () => back.end());
    back.on("close", () => front.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    take() {
      const taken = opened;
      opened = [];
      return taken;
    },
    open: () => openCount,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
