-- 0005_session_host: a session records the machine it was created on and the
-- project its directory belongs to (storage/project_identity.h), so `--cwd`
-- scoping finds a session from another machine whose checkout of the same
-- repository lives at another path.
--
-- Existing sessions were made where this database lives (a SQLite store is
-- one machine's $CODEX_HOME/sessions.db): their host is this machine's name
-- (codex_host_name()), their project the key of their cwd as it is on this
-- machine now ("" when the directory is gone or not a checkout with a remote).
-- Both functions are registered by the application on its connection.
ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT '';
CREATE TEMP TABLE session_places AS
SELECT cwd, codex_project_key(cwd) AS project FROM (SELECT DISTINCT cwd FROM sessions);
UPDATE sessions SET
  host = codex_host_name(),
  project = (SELECT p.project FROM session_places AS p WHERE p.cwd = sessions.cwd);
DROP TABLE session_places;
-- Newest-first within one project, as sessions_cwd_recent is within one cwd.
CREATE INDEX sessions_project_recent ON sessions(archived, project, updated_at_ms DESC, id DESC);
