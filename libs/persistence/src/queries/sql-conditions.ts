/** Builds `$n` placeholders as conditions are added, so optional filters never misnumber parameters. */
export class Conditions {
  private readonly clauses: string[] = [];

  /** `parameters`: another Conditions' list, for a group of conditions (a subquery's) numbered after it. */
  constructor(readonly parameters: unknown[] = []) {}

  add(clause: (placeholder: string) => string, value: unknown): void {
    this.parameters.push(value);
    this.clauses.push(clause(`$${this.parameters.length}`));
  }

  /** A condition without a parameter of its own. */
  also(clause: string): void {
    this.clauses.push(clause);
  }

  where(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }

  /** The conditions joined with AND, or null when there are none. */
  joined(): string | null {
    return this.clauses.length ? this.clauses.join(' AND ') : null;
  }

  next(value: unknown): string {
    this.parameters.push(value);
    return `$${this.parameters.length}`;
  }
}
