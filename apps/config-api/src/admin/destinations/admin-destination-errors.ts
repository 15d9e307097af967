import { DomainError, validationFailed } from '@app/runtime';
import { DestinationNotFoundError, DestinationProblemError } from '../../destinations/destinations.service';

/** The destinations service's refusals in the admin API's words (422 naming each field, §3); 404 for an id the account does not have. */
export async function adminAnswered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationProblemError) throw validationFailed(error.problems);
    if (error instanceof DestinationNotFoundError) throw new DomainError('not_found', error.message);
    throw error;
  }
}
