-- 0009_session_row_in_place (PostgreSQL): an append updates its session's
-- row in place (a HOT update), so a session appended to many times does not
-- leave a dead copy of its row in every index of sessions (issue 27: a
-- smaller store; the same sessions, order and rules).
--
-- Each append moves the session's head and its time. Both were indexed
-- (sessions_head; sessions_recent, sessions_cwd_recent and
-- sessions_project_recent), so no update could be HOT: each left a dead row
-- version and a new entry in all eight indexes of sessions, ~330 bytes an
-- append, which only VACUUM frees (measured: 85-123 bytes per item for the
-- storage_bench session of 2,500 appends of 4 tiny items, a burst where
-- autovacuum never runs). PostgreSQL updates a row in place, without index
-- entries, when no indexed column changes and its page has room. So:
--
--  - The recency indexes order by updated_slot, the update time in whole
--    10-second slots (a stored generated column, updated_at_ms / 10000),
--    which an append changes at most once per slot; updated_at_ms itself is
--    no longer indexed. Queries order by (updated_slot DESC, updated_at_ms
--    DESC, id DESC): the same order as (updated_at_ms DESC, id DESC), since
--    the slot never decreases as the time grows; the index gives the slots in
--    order and the server sorts the sessions of the newest slots only
--    (PostgresSessionStore::ListSessions, LatestSession). The slot's length is
--    kUpdatedSlotMs in storage/postgres_store_internal.h: the two change
--    together, by a migration.
--  - sessions_head is dropped with the foreign key it served (deleting an
--    item looked up the sessions whose head it is). The rule stays, kept by
--    the triggers below as the foreign key kept it: a head must name an
--    existing item (checked at each change of a head, which holds the item
--    FOR KEY SHARE until the transaction ends, as the key's check did), and an
--    item that is some session's head cannot be deleted (checked once per
--    DELETE statement, by one join with sessions, where the key checked each
--    deleted row through the index). The error is the same SQLSTATE 23503.
--  - sessions leaves a tenth of each page free (fillfactor 90), where the
--    new version of a row goes; the rewrite that adds the column applies it.
--
-- The B-tree indexes of items take fillfactor 100. A B-tree page splits at
-- the fill factor only when it is the rightmost page (elsewhere it splits in
-- two halves): items_pkey and items_parent grow at their right end (new ids,
-- and parents that are the previous item of the same session), and
-- items_session does for the newest session, so those pages split full
-- instead of 90% full. A rebuild (REINDEX) would pack every page full, and a
-- session appended to afterwards would split its page once. Pages already
-- split stay as they are. One transaction, as every migration; sessions is
-- rewritten (one row per session), items is not.
ALTER TABLE sessions SET (fillfactor = 90);
ALTER TABLE sessions ADD COLUMN updated_slot BIGINT
  GENERATED ALWAYS AS (updated_at_ms / 10000) STORED;
DROP INDEX sessions_recent;
DROP INDEX sessions_cwd_recent;
DROP INDEX sessions_project_recent;
-- Newest first, over every directory, within one, and within one project.
CREATE INDEX sessions_recent ON sessions(archived, updated_slot DESC);
CREATE INDEX sessions_cwd_recent ON sessions(archived, cwd, updated_slot DESC);
CREATE INDEX sessions_project_recent ON sessions(archived, project, updated_slot DESC);

ALTER TABLE sessions DROP CONSTRAINT sessions_head_item_id_fkey;
DROP INDEX sessions_head;

CREATE FUNCTION codex_session_head_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM items WHERE id = NEW.head_item_id FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'session % names head item %, which does not exist', NEW.id,
      NEW.head_item_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER sessions_head_insert AFTER INSERT ON sessions FOR EACH ROW
  WHEN (NEW.head_item_id IS NOT NULL) EXECUTE FUNCTION codex_session_head_exists();
CREATE TRIGGER sessions_head_update AFTER UPDATE OF head_item_id ON sessions FOR EACH ROW
  WHEN (NEW.head_item_id IS NOT NULL AND NEW.head_item_id IS DISTINCT FROM OLD.head_item_id)
  EXECUTE FUNCTION codex_session_head_exists();

CREATE FUNCTION codex_session_heads_kept() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held BIGINT;
BEGIN
  SELECT s.head_item_id INTO held FROM old_rows AS o JOIN sessions AS s ON s.head_item_id = o.id
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'item % is the head of a session and cannot be removed', held
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER items_heads_kept_delete AFTER DELETE ON items
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
  EXECUTE FUNCTION codex_session_heads_kept();
-- Item ids never change; if one did, the same rule holds for its old id.
CREATE FUNCTION codex_session_head_id_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM sessions WHERE head_item_id = OLD.id) THEN
    RAISE EXCEPTION 'item % is the head of a session and cannot be renumbered', OLD.id
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER items_heads_kept_update AFTER UPDATE OF id ON items FOR EACH ROW
  WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION codex_session_head_id_kept();

ALTER INDEX items_pkey SET (fillfactor = 100);
ALTER INDEX items_parent SET (fillfactor = 100);
ALTER INDEX items_session SET (fillfactor = 100);
