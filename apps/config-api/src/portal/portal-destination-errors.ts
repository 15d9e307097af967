import { DomainError } from '@app/runtime';
import { DestinationNotFoundError, DestinationProblemError } from '../destinations/destinations.service';
import { OpenApiCode } from '../open-api/open-api-errors';

/** The destinations service's refusals in the portal's words (400 with the Open API text, CONTRACT §10); 404 for an id the account does not have. */
export async function portalAnswered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationProblemError) throw new DomainError('invalid_param', `code ${OpenApiCode.invalidParam}: ${error.message}`, error.problems);
    if (error instanceof DestinationNotFoundError) throw new DomainError('not_found', error.message);
    throw error;
  }
}
