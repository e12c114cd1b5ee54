-- 0008_search_ranking (PostgreSQL): search ranks by the BM25 SQLite's FTS5
-- uses (storage/search_rank.h), so both backends return the same hits in the
-- same order (issue 27: one search semantics). BM25 needs, besides the
-- phrase counts read from the matching rows' lexemes:
--
--  - items.search_tokens: the item's number of search tokens (what FTS5
--    records in its docsize for the same text); NULL for an item with no
--    search text, which is no row of SQLite's index either. 0 for a text
--    with no word (punctuation only): SQLite indexes it with no token.
--  - search_totals: the number of such items and their tokens, a row per
--    session key (an append touches its own session's row only: no row that
--    every session updates), summed at query time. Kept by the statement
--    triggers below on every insert, update and delete of items, whichever
--    door they come through (append, fork, import, copy, removal, purge,
--    the re-index at open).
--
-- search_tokens of the items stored before is the number of positions their
-- tsvector holds: exact unless the tsvector lost positions (words past the
-- 16383rd, a lexeme at the cap of 256 positions). Those items, and the items
-- without lexemes whose text may be words-free punctuation (every kind but
-- compaction items and checkpoints, which have no search text), are listed
-- for the re-index PostgresSessionStore::Open runs after the migrations: it
-- counts their tokens from the body, and the triggers correct the totals.
-- The GIN index is made again after the update (updating it row by row
-- would cost far more). One transaction, as every migration.
DROP INDEX items_tsv;
ALTER TABLE items ADD COLUMN search_tokens INTEGER;
UPDATE items SET search_tokens =
  (SELECT COALESCE(SUM(cardinality(u.positions)), 0)::INTEGER FROM unnest(tsv) AS u)
  WHERE tsv IS NOT NULL;
CREATE INDEX items_tsv ON items USING GIN (tsv) WITH (fastupdate = off);
INSERT INTO items_refold(item_id)
  SELECT i.id FROM items AS i
  WHERE (i.tsv IS NULL AND i.kind NOT IN (9, 10))
     OR i.search_tokens >= 16383
     OR EXISTS (SELECT 1 FROM unnest(i.tsv) AS u
                WHERE u.positions IS NULL OR cardinality(u.positions) >= 256)
ON CONFLICT (item_id) DO NOTHING;

CREATE TABLE search_totals (
  session_key INTEGER PRIMARY KEY,
  items       BIGINT NOT NULL,
  tokens      BIGINT NOT NULL
);
INSERT INTO search_totals(session_key, items, tokens)
  SELECT session_key, count(*), SUM(search_tokens) FROM items
  WHERE search_tokens IS NOT NULL GROUP BY session_key;

CREATE FUNCTION codex_search_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO search_totals AS t(session_key, items, tokens)
      SELECT session_key, count(*), SUM(search_tokens) FROM new_rows
      WHERE search_tokens IS NOT NULL GROUP BY session_key
      ON CONFLICT (session_key) DO UPDATE
      SET items = t.items + excluded.items, tokens = t.tokens + excluded.tokens;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO search_totals AS t(session_key, items, tokens)
      SELECT session_key, -count(*), -SUM(search_tokens) FROM old_rows
      WHERE search_tokens IS NOT NULL GROUP BY session_key
      ON CONFLICT (session_key) DO UPDATE
      SET items = t.items + excluded.items, tokens = t.tokens + excluded.tokens;
  ELSE
    INSERT INTO search_totals AS t(session_key, items, tokens)
      SELECT session_key, SUM(n), SUM(k) FROM (
        SELECT session_key, 1 AS n, search_tokens AS k FROM new_rows
        WHERE search_tokens IS NOT NULL
        UNION ALL
        SELECT session_key, -1, -search_tokens FROM old_rows
        WHERE search_tokens IS NOT NULL) AS d
      GROUP BY session_key
      ON CONFLICT (session_key) DO UPDATE
      SET items = t.items + excluded.items, tokens = t.tokens + excluded.tokens;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER items_search_totals_insert AFTER INSERT ON items
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION codex_search_totals();
CREATE TRIGGER items_search_totals_delete AFTER DELETE ON items
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION codex_search_totals();
CREATE TRIGGER items_search_totals_update AFTER UPDATE ON items
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION codex_search_totals();
