-- expire-deliveries
WITH expired AS (
  SELECT id, store_id FROM delivery_queue d
  WHERE d.id < ('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1))
    AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
    AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
    AND (d.lease_until IS NULL OR d.lease_until <= now())
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), ended AS (
  DELETE FROM delivery_queue d USING expired x WHERE d.id = x.id AND d.store_id = x.store_id
  RETURNING d.*
), logged AS (
  INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count, last_status_code, last_error, created_at, updated_at, ordered, restarted_at)
  SELECT id, store_id, event_id, webhook_id, event_type, 'failed', attempt_count, last_status_code, $3, created_at, now(),
    ordered, restarted_at
  FROM ended
)
SELECT count(*)::int AS ended FROM ended;

-- expire-deliveries-on-cluster
WITH expired AS (
  SELECT id, store_id FROM delivery_queue d
  WHERE d.id < ('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(secs => $1::double precision / 1000)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1))
    AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
    AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
    AND (d.lease_until IS NULL OR d.lease_until <= now())
  LIMIT $2
), ended AS (
  DELETE FROM delivery_queue d USING expired x
  WHERE d.id = x.id AND d.store_id = x.store_id AND (d.lease_until IS NULL OR d.lease_until <= now())
  RETURNING d.*
), logged AS (
  INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count, last_status_code, last_error, created_at, updated_at, ordered, restarted_at)
  SELECT id, store_id, event_id, webhook_id, event_type, 'failed', attempt_count, last_status_code, $3, created_at, now(),
    ordered, restarted_at
  FROM ended
)
SELECT count(*)::int AS ended FROM ended;
