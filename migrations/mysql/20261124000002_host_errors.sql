-- A host's recent error rate, shared by the fleet: checks and failures (no answer at all)
-- since the counts were last halved (halved whenever the checks pass 100, so they weigh the
-- last hundred or so). A worker taking a host over starts it slowed down when it was failing.
-- Rows exist only for hosts that throttled or failed at least once.
ALTER TABLE hosts
    ADD COLUMN recent_checks BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN recent_errors BIGINT NOT NULL DEFAULT 0;
