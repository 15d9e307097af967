import { RangeCharts, rangeOf } from '../charts/range-charts';
import { navigate } from '../router';
import { health } from './portal-api';
import { portalLink, type PortalRoute } from './portal-router';

/** Deliveries, failures and latency of the account for the last hour, day or week: the console's charts. */
export function HealthPage({ route }: { route: PortalRoute }) {
  return (
    <>
      <h1>Health</h1>
      <RangeCharts range={rangeOf(route.query)} load={health} onRange={(range) => navigate(portalLink('health', { range }))} />
    </>
  );
}
