// js-yaml on a thread of its own, for the values whose YAML takes long to
// write: js-yaml writes a post of 100,000 control characters (each one
// escaped) in some 20 to 40 ms, and on the event loop that is as long a wait
// for every other request. The thread runs the same js-yaml with the same
// OPTIONS (yaml.ts) and hands the document back; nothing else differs, so
// the bytes are the same as those written on the loop.
//
// One thread, started when first needed, keeping the process alive only
// while it writes: documents are written one after another, in the order asked.
// If it fails (it exits, or a value cannot be written), what was asked of it
// is rejected, and the next call starts a new one.

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { OPTIONS } from "./yaml.js";

/** The thread's program: CommonJS, evaluated, with js-yaml resolved from here (the same copy the server loads). */
const PROGRAM = `
const { parentPort, workerData } = require("node:worker_threads");
const { dump } = require(workerData.jsYaml);
parentPort.on("message", ({ id, json }) => {
  try {
    parentPort.postMessage({ id, document: dump(JSON.parse(json), workerData.options) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

type Waiting = { readonly resolve: (document: string) => void; readonly reject: (error: Error) => void };

let thread: { readonly worker: Worker; readonly waiting: Map<number, Waiting> } | undefined;
let nextId = 0;

function start(): NonNullable<typeof thread> {
  const worker = new Worker(PROGRAM, { eval: true, workerData: { jsYaml: createRequire(import.meta.url).resolve("js-yaml"), options: OPTIONS } });
  const waiting = new Map<number, Waiting>();
  const started = { worker, waiting };
  worker.on("message", (message: { id: number; document?: string; error?: string }) => {
    const waiter = waiting.get(message.id);
    if (waiter === undefined) return;
    waiting.delete(message.id);
    if (waiting.size === 0) worker.unref();
    if (message.document !== undefined) waiter.resolve(message.document);
    else waiter.reject(new Error(`js-yaml could not write a value: ${message.error}`));
  });
  const fail = (error: Error) => {
    if (thread === started) thread = undefined;
    for (const waiter of waiting.values()) waiter.reject(error);
    waiting.clear();
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the YAML thread exited with code ${code}`)));
  // After the listeners (adding a "message" listener refs the thread again): only a document being written keeps the process alive.
  worker.unref();
  return started;
}

/** The YAML document of the value whose JSON text is `json`, written by js-yaml on its own thread. */
export function yamlDocumentOffLoop(json: string): Promise<string> {
  thread ??= start();
  const { waiting, worker } = thread;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    if (waiting.size === 1) worker.ref();
    worker.postMessage({ id, json });
  });
}
