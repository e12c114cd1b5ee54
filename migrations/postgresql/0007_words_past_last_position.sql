-- 0007_words_past_last_position (PostgreSQL): every word of an item is
-- searchable, as on SQLite (issue 27: one search semantics).
--
-- A tsvector position goes up to 16383. Until this schema the lexemes of an
-- item stopped at its 16383rd word, so a word only found later in a long
-- tool output matched on SQLite and not here. From now on a word first
-- found after it is kept without a position: it matches as a word or a
-- prefix, never inside a phrase (storage/pg_search.h, TsVectorOf).
--
-- The items indexed before that may have lost words are listed for the
-- re-index the application runs right after the migrations
-- (PostgresSessionStore::Open, under the migration lock, in batches, from
-- each item's body): those with a word at position 16383, or a word at the
-- cap of 256 positions (the 16383rd word's own positions may have stopped
-- before it). Re-indexing an item that had lost nothing gives it the same
-- lexemes again. Nothing else changes; one transaction, as every migration.
INSERT INTO items_refold(item_id)
  SELECT i.id FROM items AS i
  WHERE i.tsv IS NOT NULL
    AND EXISTS (SELECT 1 FROM unnest(i.tsv) AS u
                WHERE u.positions[cardinality(u.positions)] = 16383
                   OR cardinality(u.positions) >= 256)
ON CONFLICT (item_id) DO NOTHING;
