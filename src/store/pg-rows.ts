// A post's row as the PostgreSQL store reads it (timestamps as Timestamp
// strings, pg-types.ts; tags as a string array), and the post it holds:
// shared by the store and the migration that fills in representations.

import { makePost } from "./records.js";
import type { Post, Timestamp } from "./types.js";

export interface PostRow {
  id: string;
  title: string;
  body: string;
  author: string | null;
  tags: string[] | null;
  published_at: Timestamp;
  updated_at: Timestamp;
}

export const postFromRow = (r: PostRow): Post =>
  makePost(r.id, { title: r.title, body: r.body, ...(r.author === null ? {} : { author: r.author }), ...(r.tags === null ? {} : { tags: r.tags }) }, r.published_at, r.updated_at);
