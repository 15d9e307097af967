/** Figures measured once per bench run and shared by the scenarios that compare against them. */
export class FigureMemo {
  private readonly figures = new Map<string, Promise<unknown>>();

  /** The figure named `key`, measured by `measure` the first time it is asked for. */
  once<T>(key: string, measure: () => Promise<T>): Promise<T> {
    let figure = this.figures.get(key) as Promise<T> | undefined;
    if (!figure) {
      figure = measure();
      this.figures.set(key, figure);
    }
    return figure;
  }
}
