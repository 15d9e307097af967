import { DestinationsPanel } from '../components/destinations-panel';
import { destinations } from './portal-api';

/** CONTRACT §11: the account's destinations, its push URL (`primary`) first; that one is edited on the Endpoint page. */
export function DestinationsPage() {
  return (
    <>
      <h1>Destinations</h1>
      <DestinationsPanel client={destinations} scope="portal" primaryNote="The primary is your push URL: change it on the Endpoint page." />
    </>
  );
}
