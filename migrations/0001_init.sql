-- 0001_init: sessions as pointers into a tree of immutable items
-- (ARCHITECTURE.md, Data model). Applied once, in its own transaction.

-- Items are immutable and shared by every session whose history passes
-- through them. `body` is the item's JSON exactly as sent on the wire.
-- `session_id` names the session that appended the item (no foreign key: an
-- item outlives its session when a fork still reaches it).
CREATE TABLE items (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_id     INTEGER REFERENCES items(id),
  session_id    TEXT    NOT NULL,
  turn_id       TEXT    NOT NULL DEFAULT '',
  kind          TEXT    NOT NULL,
  role          TEXT    NOT NULL DEFAULT '',
  call_id       TEXT    NOT NULL DEFAULT '',
  server_id     TEXT    NOT NULL DEFAULT '',
  body          TEXT    NOT NULL,
  tokens_est    INTEGER NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX items_parent ON items(parent_id);
CREATE INDEX items_session ON items(session_id);

-- A session is a pointer (head_item_id) into the item tree; a fork is a new
-- pointer. `name` is NULL until `codex sessions rename`; names are unique.
CREATE TABLE sessions (
  id                  TEXT    PRIMARY KEY NOT NULL,
  head_item_id        INTEGER REFERENCES items(id),
  forked_from_session TEXT,
  forked_from_item    INTEGER REFERENCES items(id),
  cwd                 TEXT    NOT NULL DEFAULT '',
  model               TEXT    NOT NULL DEFAULT '',
  provider            TEXT    NOT NULL DEFAULT '',
  title               TEXT    NOT NULL DEFAULT '',
  name                TEXT,
  source              TEXT    NOT NULL DEFAULT 'exec',
  created_at_ms       INTEGER NOT NULL,
  updated_at_ms       INTEGER NOT NULL,
  archived            INTEGER NOT NULL DEFAULT 0,
  tokens_used         INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE UNIQUE INDEX sessions_name ON sessions(name) WHERE name IS NOT NULL;
-- Newest-first keyset paging, over every directory and within one.
CREATE INDEX sessions_recent ON sessions(archived, updated_at_ms DESC, id DESC);
CREATE INDEX sessions_cwd_recent ON sessions(archived, cwd, updated_at_ms DESC, id DESC);
CREATE INDEX sessions_forked_from ON sessions(forked_from_session);
CREATE INDEX sessions_head ON sessions(head_item_id);

-- Usage and outcome per turn.
CREATE TABLE turns (
  session_id              TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id                 TEXT    NOT NULL,
  status                  TEXT    NOT NULL,
  error                   TEXT    NOT NULL DEFAULT '',
  input_tokens            INTEGER NOT NULL DEFAULT 0,
  cached_input_tokens     INTEGER NOT NULL DEFAULT 0,
  output_tokens           INTEGER NOT NULL DEFAULT 0,
  reasoning_output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens            INTEGER NOT NULL DEFAULT 0,
  started_at_ms           INTEGER NOT NULL DEFAULT 0,
  ended_at_ms             INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (session_id, turn_id)
) WITHOUT ROWID;

-- The rollout log of things that are not items (turn start/end, approvals,
-- exec results, errors, compactions). `payload` is a JSON object.
CREATE TABLE events (
  id            INTEGER PRIMARY KEY,
  session_id    TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id       TEXT    NOT NULL DEFAULT '',
  type          TEXT    NOT NULL,
  payload       TEXT    NOT NULL,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX events_session ON events(session_id, id);
