// Which PostgreSQL failures mean "the server cannot be reached" (503, keep
// serving) and which are bugs, and the one line an operator reads at start.

import t from "tap";
import { describeOpenFailure, isUnavailable, redactUrl } from "../../src/store/pg-errors.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

t.test("unreachable: sockets, shutdowns, lost connections, pool time-outs", async (t) => {
  const unavailable = [
    withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
    withCode("read ECONNRESET", "ECONNRESET"),
    withCode("getaddrinfo ENOTFOUND db.internal", "ENOTFOUND"),
    withCode("terminating connection due to administrator command", "57P01"),
    withCode("the database system is starting up", "57P03"),
    withCode("sorry, too many clients already", "53300"),
    withCode("canceling statement due to statement timeout", "57014"),
    withCode("connection failure", "08006"),
    new Error("Connection terminated unexpectedly"),
    new Error("timeout exceeded when trying to connect"),
    new Error("Query read timeout"),
    new Error("Client has encountered a connection error and is not queryable"),
  ];
  for (const error of unavailable) t.ok(isUnavailable(error), error.message);
});

t.test("not unreachable: the query, the data or the schema is wrong", async (t) => {
  const bugs: unknown[] = [
    withCode('duplicate key value violates unique constraint "articles_pkey"', "23505"),
    withCode('relation "posts" does not exist', "42P01"),
    withCode("syntax error at or near", "42601"),
    withCode('invalid byte sequence for encoding "UTF8": 0x00', "22021"),
    new Error("the store is closed"),
    new Error("Cannot use a pool after calling end on the pool"),
    "a string",
    undefined,
  ];
  for (const error of bugs) t.notOk(isUnavailable(error), String((error as Error | undefined)?.message ?? error));
});

t.test("messages never show the password", async (t) => {
  t.equal(redactUrl("postgres://app:s3cret@db:5432/startline"), "postgres://app:***@db:5432/startline");
  t.equal(redactUrl("postgres://app@db/startline"), "postgres://app@db/startline");
  t.equal(redactUrl("not a url"), "(DATABASE_URL)");
  const line = describeOpenFailure(withCode('password authentication failed for user "app"', "28P01"), "postgres://app:s3cret@db:5432/startline");
  t.equal(line, 'the PostgreSQL server at postgres://app:***@db:5432/startline refused the credentials (password authentication failed for user "app"). Check the user and password in DATABASE_URL.');
});

t.test("an empty AggregateError (every address refused) still names its code", async (t) => {
  const error = Object.assign(new AggregateError([], ""), { code: "ECONNREFUSED" });
  t.match(describeOpenFailure(error, "postgres://localhost/x"), /^cannot reach the PostgreSQL server at postgres:\/\/localhost\/x \(ECONNREFUSED\)\. /);
});
