-- Forget the owner grants sent.
DROP TABLE settleflow_owner_grants;
