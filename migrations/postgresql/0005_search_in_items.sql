-- 0005_search_in_items (PostgreSQL): the store at about half its size
-- (issue 27), the same search.
--
-- The lexemes of an item move into the item's row (items.tsv, NULL for an
-- item without searchable text): items_search cost a second row per item
-- (its header, its own item_id and its primary key, ~70 bytes) for a value
-- that is written once with the item and never changes.
--
-- The GIN index is built without its pending list (fastupdate = off): with
-- it, a store written an item at a time kept the index at several times the
-- size of one built at once (measured: 395 against 66 bytes per item for the
-- storage_bench session; VACUUM recycles the list's pages but never returns
-- them). Each insert now goes into the tree directly, as a bulk build would.
--
-- The lexemes are stored MAIN (compressed in the row, out of it only when
-- the row is still too big once the body has gone to TOAST): ranking reads
-- the tsvector of every match, and an out-of-line one is a TOAST index probe
-- and chunk reads more (measured: the ranking query of the storage_bench
-- corpus ~13 ms against ~21 ms with the default EXTENDED, and 8% smaller).
--
-- Rows made with earlier folding rules (folding < 3, before 0004 finished
-- re-indexing them) are listed in items_refold; the application re-indexes
-- them from their item's body right after the migrations
-- (PostgresSessionStore::Open, under the migration lock, in batches) and
-- removes them from the list.
--
-- One transaction, as every migration: a crash leaves the store at 0004.
-- The UPDATE leaves a dead copy of every row; CLUSTER rewrites the table
-- (and its indexes) without them, so the upgraded store is not larger than
-- the one it came from.
ALTER TABLE items ADD COLUMN tsv TSVECTOR;
ALTER TABLE items ALTER COLUMN tsv SET STORAGE MAIN;
UPDATE items AS i SET tsv = s.tsv FROM items_search AS s WHERE s.item_id = i.id;
CREATE TABLE items_refold (item_id BIGINT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE);
INSERT INTO items_refold(item_id) SELECT item_id FROM items_search WHERE folding < 3;
DROP TABLE items_search;
CLUSTER items USING items_pkey;
CREATE INDEX items_tsv ON items USING GIN (tsv) WITH (fastupdate = off);
