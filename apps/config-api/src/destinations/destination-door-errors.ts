import { ApiError, validationFailed } from '@app/runtime';
import { OpenApiCode } from '../open-api/open-api-errors';
import { DestinationNotFoundError, DestinationProblemError } from './destinations.service';

/*
 * The service's refusals in the words of the portal (400 with the Open API text, CONTRACT §10) and of
 * the admin API (422 naming each field, §3). Both answer 404 for an id the account does not have.
 */

export async function portalAnswered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationProblemError) throw new ApiError(400, 'invalid_param', `code ${OpenApiCode.invalidParam}: ${error.message}`, error.problems);
    if (error instanceof DestinationNotFoundError) throw new ApiError(404, 'not_found', error.message);
    throw error;
  }
}

export async function adminAnswered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DestinationProblemError) throw validationFailed(error.problems);
    if (error instanceof DestinationNotFoundError) throw new ApiError(404, 'not_found', error.message);
    throw error;
  }
}
