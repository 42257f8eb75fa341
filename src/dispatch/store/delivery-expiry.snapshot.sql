-- expire-deliveries
WITH expired AS (
  SELECT id, store_id FROM deliveries
  WHERE status = 'pending'
    AND id < ('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1))
    AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
    AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
    AND (lease_token IS NULL OR next_attempt_at <= now())
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), ended AS (
  UPDATE deliveries d
  SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, last_error = $3, updated_at = now()
  FROM expired x
  WHERE d.id = x.id AND d.store_id = x.store_id
  RETURNING 1
)
SELECT count(*)::int AS ended FROM ended;

-- expire-deliveries-on-cluster
WITH expired AS (
  SELECT id, store_id FROM deliveries
  WHERE status = 'pending'
    AND id < ('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1))
    AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
    AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
    AND (lease_token IS NULL OR next_attempt_at <= now())
  LIMIT $2
), ended AS (
  UPDATE deliveries d
  SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, last_error = $3, updated_at = now()
  FROM expired x
  WHERE d.id = x.id AND d.store_id = x.store_id AND d.status = 'pending' AND (d.lease_token IS NULL OR d.next_attempt_at <= now())
  RETURNING 1
)
SELECT count(*)::int AS ended FROM ended;
