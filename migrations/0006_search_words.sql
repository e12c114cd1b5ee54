-- 0006_search_words: one search semantics on both backends, and the text of
-- an item stored once.
--
-- items_fts is made again with the "codex" tokenizer (storage/fts_tokenizer.h,
-- registered by the application on every connection): accents of Greek and
-- every Latin script folded, Han/kana/Hangul runs indexed as bigrams, emoji as
-- words, the same tokens the PostgreSQL backend indexes. It is now an
-- external-content table: the index keeps no copy of the text (before, its
-- items_fts_content held a second copy of every item's text); FTS5 reads the
-- text, for snippets, from the view items_text, which derives it from the item
-- body with codex_search_text() (storage/search_text.h, registered alike). The
-- application inserts each item's text with the item (as since 0003); a
-- deleted item's tokens are removed by the trigger below with the same text.
DROP TRIGGER IF EXISTS items_fts_delete;
DROP TABLE items_fts;
CREATE VIEW items_text AS SELECT id, codex_search_text(kind, role, body) AS text FROM items;
CREATE VIRTUAL TABLE items_fts USING fts5(
  text, content = 'items_text', content_rowid = 'id', tokenize = 'codex');
INSERT INTO items_fts(rowid, text)
SELECT id, t FROM (SELECT id, codex_search_text(kind, role, body) AS t FROM items)
WHERE t IS NOT NULL;
CREATE TRIGGER items_fts_delete AFTER DELETE ON items
WHEN codex_search_text(OLD.kind, OLD.role, OLD.body) IS NOT NULL
BEGIN
  INSERT INTO items_fts(items_fts, rowid, text)
  VALUES ('delete', OLD.id, codex_search_text(OLD.kind, OLD.role, OLD.body));
END;
