import { parseInfo, perDelivery } from './redis-stats';

describe('Redis counters per delivery', () => {
  it('takes calls per command and the byte totals from INFO', () => {
    const counters = parseInfo('# Commandstats\r\ncmdstat_evalsha:calls=30,usec=1\r\ncmdstat_zadd:calls=5,usec=2\r\n# Stats\r\ntotal_net_input_bytes:1000\r\ntotal_net_output_bytes:400\r\n');
    expect(Object.fromEntries(counters.calls)).toEqual({ evalsha: 30, zadd: 5 });
    expect(counters.inputBytes).toBe(1000);
    const later = parseInfo('cmdstat_evalsha:calls=50\ncmdstat_zadd:calls=5\ncmdstat_xadd:calls=10\ntotal_net_input_bytes:3000\ntotal_net_output_bytes:1400\n');
    const per = perDelivery(counters, later, 10);
    expect(per.commands).toBe(3);
    expect(per.top).toEqual([{ command: 'evalsha', perDelivery: 2 }, { command: 'xadd', perDelivery: 1 }]);
    expect(per.inputBytes).toBe(200);
    expect(per.outputBytes).toBe(100);
  });
});
