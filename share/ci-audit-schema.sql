-- The audit trail of Chalk's CI gate (.github/workflows/chalk.yml and .gitlab/chalk.gitlab-ci.yml,
-- which `chalk init` writes): when the CHALK_AUDIT_DB_URL secret is set, the gate's audit job adds
-- one row for every pipeline of a Chalk request (a chalk/* or tutoring/* branch). Apply this file
-- once, as the database's owner:
--
--   psql "postgresql://owner@host/audit" -f share/ci-audit-schema.sql
--
-- and give the role in CHALK_AUDIT_DB_URL nothing but the right to add rows:
--
--   GRANT INSERT ON chalk_audit TO chalk_ci;
--   GRANT USAGE ON SEQUENCE chalk_audit_id_seq TO chalk_ci;
--
-- Every value comes from CI variables (a branch name among them); the job passes each one as a
-- psql variable quoted with :'name', never as SQL text.
CREATE TABLE IF NOT EXISTS chalk_audit (
  id bigserial PRIMARY KEY,
  forge text NOT NULL CHECK (forge IN ('github', 'gitlab')),
  -- owner/name on GitHub, the project path on GitLab.
  project text NOT NULL,
  -- The ticket key in the branch name; NULL when it names none.
  ticket text,
  -- The pull request's number, the merge request's IID.
  request text NOT NULL,
  commit_sha text NOT NULL,
  -- The workflow run's id, the pipeline's id.
  pipeline text NOT NULL,
  -- GitHub: the spec and rubric jobs both passed, or not. GitLab: every earlier job of the pipeline did.
  outcome text NOT NULL CHECK (outcome IN ('passed', 'failed', 'cancelled')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS chalk_audit_project_idx ON chalk_audit (project, created_at);
