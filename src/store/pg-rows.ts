// A post's row as schema versions 1 to 4 held it in PostgreSQL, the fields
// as columns (timestamps as Timestamp strings, pg-types.ts; tags as a string
// array), and the post it holds: what migration 4 reads to fill in each
// post's representation. From version 5 a row holds only that representation.

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
