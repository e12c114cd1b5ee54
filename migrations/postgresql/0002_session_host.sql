-- 0002_session_host (PostgreSQL; SQLite's 0005): a session records the
-- machine it was created on and the project its directory belongs to
-- (storage/project_identity.h), so `--cwd` scoping finds a session from
-- another machine whose checkout of the same repository lives at another path.
--
-- A shared database cannot tell which machine made its existing sessions, nor
-- read their directories: their host stays '' (shown as "?") and their
-- project '' (they are matched by their exact cwd, as before).
ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_project_recent
  ON sessions(archived, project, updated_at_ms DESC, id COLLATE "C" DESC);
