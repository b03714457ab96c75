-- Forget the attempts recorded.
DROP TABLE settleflow_attempts;
