// The posts table of the two data comparators (fastify-data.ts and
// data-ceiling.ts, for bench/data.ts), so that both read and write the same
// rows with the same statements, as issue 28 describes them: WAL and
// synchronous=NORMAL like startline's default store, one table with an
// autoincrement `seq` and a unique `id`, the post's fields as columns (the
// columns of startline's own first schema, src/store/schema.ts, whose
// postFromRow turns a row into the post startline would answer, field for
// field), and the statements a user would write.

import Database from "better-sqlite3";
import { postFromRow, POST_COLUMNS, type PostRow } from "../../src/store/schema.js";
import type { Post } from "../../src/store/types.js";

export interface Row extends PostRow {
  seq: number;
}

export const toPost: (row: Row) => Post = postFromRow;

export interface PostTable {
  readonly db: Database.Database;
  readonly q: {
    readonly get: Database.Statement<[string], Row>;
    readonly page: Database.Statement<[number, number], Row>;
    readonly all: Database.Statement<[], Row>;
    readonly insert: Database.Statement<[string, string, string, string | null, string | null, string, string]>;
  };
}

export function openPostTable(file: string): PostTable {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE IF NOT EXISTS posts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, body TEXT NOT NULL,
    author TEXT, tags TEXT, published_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
  const columns = `seq, ${POST_COLUMNS}`;
  const q = {
    get: db.prepare<[string], Row>(`SELECT ${columns} FROM posts WHERE id = ?`),
    page: db.prepare<[number, number], Row>(`SELECT ${columns} FROM posts WHERE seq > ? ORDER BY seq LIMIT ?`),
    all: db.prepare<[], Row>(`SELECT ${columns} FROM posts ORDER BY seq`),
    insert: db.prepare<[string, string, string, string | null, string | null, string, string]>(
      `INSERT INTO posts (${POST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
  return { db, q };
}
