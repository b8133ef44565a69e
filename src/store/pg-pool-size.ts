// How many connections a PostgreSQL store holds at most unless DATABASE_POOL_SIZE says: in a file of its
// own so that the settings can name it without loading node-postgres, which a server on SQLite never uses.

export const DEFAULT_POOL_SIZE = 10;
