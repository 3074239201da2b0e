-- nonceforge lease protocol 2, Redis, release.
-- KEYS: the namespace's record, the id's lease key, the id's record.
-- ARGV: ns, id, grant id, floor, incarnation -> 1 released, 0 no longer ours.
local meta, key, rec = KEYS[1], KEYS[2], KEYS[3]
if redis.call('TYPE', meta)['ok'] ~= 'hash' or redis.call('HGET', meta, 'incarnation') ~= ARGV[5] then
  return 0
end
if redis.call('TYPE', rec)['ok'] ~= 'hash' or redis.call('HGET', rec, 'grant') ~= ARGV[3] then
  return 0
end
local kind = redis.call('TYPE', key)['ok']
if kind ~= 'none' and (kind ~= 'hash' or redis.call('HGET', key, 'grant') ~= ARGV[3]) then
  return 0
end
redis.call('DEL', key)
redis.call('HSET', rec, 'grant', '', 'holder', '', 'floor', ARGV[4])
return 1
