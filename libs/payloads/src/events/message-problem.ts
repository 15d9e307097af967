/** One problem with one field of a message; `path` is relative to the message, e.g. `cellphones[0].id`. */
export interface MessageProblem {
  path: string;
  problem: string;
}
