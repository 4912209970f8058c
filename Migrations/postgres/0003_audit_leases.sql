-- Workers claim a few tasks at a time for a while (a lease) instead of holding a
-- transaction open while they check: a claim is one short UPDATE, the checks run with no
-- transaction and no lock held, and the outcomes are stored in another short one. A
-- worker that dies leaves its tasks to whoever claims after claimed_until.
ALTER TABLE audit_tasks ADD COLUMN claimed_by text;
ALTER TABLE audit_tasks ADD COLUMN claimed_until bigint;
