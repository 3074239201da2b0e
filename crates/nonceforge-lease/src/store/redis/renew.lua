-- nonceforge lease protocol 2, Redis, renew.
-- KEYS: the namespace's record, the id's lease key, the id's record.
-- ARGV: ns, id, grant id, ttl ms, cap, incarnation, holder, token
-- -> {1} held (or re-taken: the key had expired, nobody took the id since),
--    {0, 'store'} the store lost its data, {0, 'rollback'} the store went back to
--    a copy older than the grant (its last token, or the id's, below the grant's),
--    {0, 'taken'} another grant has the id, {0, 'evicted'} an operator freed it.
local meta, key, rec = KEYS[1], KEYS[2], KEYS[3]
if redis.call('TYPE', meta)['ok'] ~= 'hash' or redis.call('HGET', meta, 'incarnation') ~= ARGV[6] then
  return {0, 'store'}
end
local token = tonumber(ARGV[8])
if (tonumber(redis.call('HGET', meta, 'last')) or 0) < token then
  return {0, 'rollback'}
end
if redis.call('TYPE', rec)['ok'] ~= 'hash' then
  return {0, 'store'}
end
local ours = redis.call('HGET', rec, 'grant')
if ours ~= ARGV[3] and (tonumber(redis.call('HGET', rec, 'token')) or 0) < token then
  return {0, 'rollback'}
elseif ours == '' then
  return {0, 'evicted'}
elseif ours ~= ARGV[3] then
  return {0, 'taken'}
end
local kind = redis.call('TYPE', key)['ok']
if kind == 'hash' and redis.call('HGET', key, 'grant') == ARGV[3] then
  redis.call('PEXPIRE', key, ARGV[4])
elseif kind == 'none' then
  redis.call('HSET', key, 'grant', ARGV[3], 'holder', ARGV[7], 'token', ARGV[8])
  redis.call('PEXPIRE', key, ARGV[4])
else
  return {0, 'taken'}
end
local f = redis.call('HGET', rec, 'floor')
if not f or not string.match(f, '^%d+$') or tonumber(ARGV[5]) > tonumber(f) then
  redis.call('HSET', rec, 'floor', ARGV[5])
end
return {1}
