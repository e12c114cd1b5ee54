-- 0004_item_usage: the total_tokens each response.completed reported, stored
-- with the item it followed (the last item committed before it). A resumed or
-- imported session starts its context estimate from the newest one on its
-- view instead of guessing from item bytes (ARCHITECTURE.md, Compaction).
-- Items are shared by forks, so the figure is per item, not per session.
CREATE TABLE item_usage (
  item_id      INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
  total_tokens INTEGER NOT NULL
);
