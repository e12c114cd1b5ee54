-- 0003_leases_search_text: the turn lease, and a search index of decoded text.
--
-- session_leases: one row while a turn runs on a session (core/session_lease.h).
-- No foreign key: a new session's first turn takes its lease before the
-- session row exists (the row is created with the first user message).
CREATE TABLE session_leases (
  session_id      TEXT    PRIMARY KEY NOT NULL,
  token           TEXT    NOT NULL,             -- identifies the holding TurnLease object
  pid             INTEGER NOT NULL,
  host            TEXT    NOT NULL,
  process_start   TEXT    NOT NULL DEFAULT '',  -- /proc/<pid>/stat start time
  started_at_ms   INTEGER NOT NULL,
  heartbeat_at_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- items_fts now holds the plain text a user saw (storage/search_text.h):
-- message text, reasoning summaries, tool-call commands and arguments, tool
-- output text with its JSON decoded. The application inserts the text with
-- each item (the insert trigger of 0002, which indexed escaped JSON, goes);
-- the delete trigger stays. Existing databases are re-indexed here with the
-- codex_search_text() function the application registers on its connection.
DROP TRIGGER IF EXISTS items_fts_insert;
DROP TABLE items_fts;
CREATE VIRTUAL TABLE items_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO items_fts(rowid, text)
SELECT id, t FROM (SELECT id, codex_search_text(kind, role, body) AS t FROM items)
WHERE t IS NOT NULL AND t <> '';

-- Sessions are now created with their first user message. Earlier versions
-- stored one for every start, even when nothing was asked ("(no message
-- yet)"); remove those that no fork builds on, with their context items.
CREATE TEMP TABLE empty_sessions AS
SELECT id FROM sessions
WHERE title = '' AND source IN ('exec', 'interactive')
  AND id NOT IN (SELECT forked_from_session FROM sessions WHERE forked_from_session IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM items AS i
                  WHERE i.session_id = sessions.id AND i.kind = 'message' AND i.role = 'user'
                    AND codex_search_text(i.kind, i.role, i.body) IS NOT NULL);
DELETE FROM turns WHERE session_id IN (SELECT id FROM empty_sessions);
DELETE FROM events WHERE session_id IN (SELECT id FROM empty_sessions);
DELETE FROM sessions WHERE id IN (SELECT id FROM empty_sessions);
DELETE FROM items
WHERE session_id IN (SELECT id FROM empty_sessions)
  AND id NOT IN (SELECT parent_id FROM items AS c
                 WHERE c.parent_id IS NOT NULL
                   AND c.session_id NOT IN (SELECT id FROM empty_sessions))
  AND id NOT IN (SELECT head_item_id FROM sessions WHERE head_item_id IS NOT NULL)
  AND id NOT IN (SELECT forked_from_item FROM sessions WHERE forked_from_item IS NOT NULL);
DROP TABLE empty_sessions;
