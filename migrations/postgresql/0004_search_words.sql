-- 0004_search_words (PostgreSQL; SQLite's 0006): one search semantics on both
-- backends, and the text of an item stored once.
--
-- Lexemes are now the tokens of storage/fts_tokenizer.h (accents of Greek and
-- every Latin script folded, Han/kana/Hangul runs as bigrams, emoji as words),
-- as SQLite's index has them: rows made before (folding < 3) are re-indexed
-- by the application right after this migration (PostgresSessionStore::Open,
-- under the migration lock, in batches), from the item's body.
--
-- items_search no longer keeps the text: it was a second copy of what the
-- item's body holds (storage/search_text.h derives it), larger than the items
-- themselves. Snippets are cut from the body's text when a search shows them.
ALTER TABLE items_search DROP COLUMN text;
ALTER TABLE items_search ALTER COLUMN folding SET DEFAULT 3;
DROP INDEX items_search_refold;
CREATE INDEX items_search_refold ON items_search(item_id) WHERE folding < 3;
