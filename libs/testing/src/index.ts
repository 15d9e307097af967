// Support that the end-to-end tests and the benchmarks share; neither reaches into the other's folder.
export { busiestWindow } from './busiest-window';
export { freePort } from './free-port';
export { waitFor, waitForValue } from './wait-for';
