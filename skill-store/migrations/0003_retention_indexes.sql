-- Indexes for the statements that run all the time and for retention (Store::prune).
--
-- The "running and lease expired" update of every task read reads only running rows,
-- however many finished rows the table holds. (The runs' equivalent, in the claim and the
-- history refresh, already reads only running rows through skills_runs_running.)
CREATE INDEX skills_tasks_lease ON skills_tasks (lease_until) WHERE status = 'running';

-- Retention deletes finished rows by age, oldest first.
CREATE INDEX skills_runs_finished ON skills_runs (finished) WHERE outcome <> 'running';
CREATE INDEX skills_deliveries_finished ON skills_deliveries (finished)
    WHERE state IN ('delivered', 'failed');
CREATE INDEX skills_tasks_finished ON skills_tasks (finished) WHERE status <> 'running';

-- Deleting a run sets its deliveries' run_id to NULL (ON DELETE SET NULL), and retention
-- keeps a run while a pending delivery names it: both look deliveries up by run_id, which
-- without this index is a scan of the whole outbox per run.
CREATE INDEX skills_deliveries_run ON skills_deliveries (run_id);
