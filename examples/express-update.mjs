// An Express 5 app on startline/node: the app as it was, served by startline's
// engine instead of node:http, which would answer UPDATE with a 400 before the
// app saw it. A small notes store, with UPDATE beside GET and POST.
// Run: PORT=8080 node examples/express-update.mjs (express is this repository's
// devDependency; elsewhere, `npm install express startline`), then:
//   curl -i -X UPDATE http://127.0.0.1:8080/notes/a -H 'Content-Type: application/json' -d '{"text": "new"}'
import express from "express";
import { createServer } from "startline/node";

const notes = new Map([["a", { text: "first" }]]);
const app = express();
app.use(express.json());

app.get("/notes/:id", (req, res) => {
  const note = notes.get(req.params.id);
  if (note === undefined) return res.status(404).json({ error: `no note ${req.params.id}` });
  res.json(note);
});
app.post("/notes/:id", (req, res) => {
  notes.set(req.params.id, { text: String(req.body?.text ?? "") });
  res.status(201).json(notes.get(req.params.id));
});
// Express 5 builds app.all() and app.<method>() from node's own method list, which has no UPDATE:
// route(...).all() takes every method, so the handler reads req.method itself.
app.route("/notes/:id").all((req, res, next) => {
  if (req.method !== "UPDATE") return next();
  const note = notes.get(req.params.id);
  if (note === undefined) return res.status(404).json({ error: `no note ${req.params.id}` });
  Object.assign(note, { text: String(req.body?.text ?? note.text) });
  res.json(note);
});

const host = process.env.HOST ?? "127.0.0.1";
const server = createServer(app).listen(Number(process.env.PORT ?? 8080), host, () => {
  console.log(`listening on http://${host}:${server.address().port}`); // only now: the socket is listening
});
