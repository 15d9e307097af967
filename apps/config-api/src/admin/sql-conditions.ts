/** Builds `$n` placeholders as conditions are added, so optional filters never misnumber parameters. */
export class Conditions {
  readonly parameters: unknown[] = [];
  private readonly clauses: string[] = [];

  add(clause: (placeholder: string) => string, value: unknown): void {
    this.parameters.push(value);
    this.clauses.push(clause(`$${this.parameters.length}`));
  }

  where(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }

  next(value: unknown): string {
    this.parameters.push(value);
    return `$${this.parameters.length}`;
  }
}
