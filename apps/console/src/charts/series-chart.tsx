import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartLine<P> {
  label: string;
  color: string;
  value: (point: P) => number | null;
  dash?: number[];
}

const HEIGHT = 220;

/**
 * One time-series chart (uPlot on a canvas). `data-nonzero` counts the points above zero, so a reader
 * (or a browser test) can tell a chart drawn from data from an empty one.
 */
export function SeriesChart<P extends { t: string }>({ name, title, unit, points, lines, markers = false }: {
  name: string;
  title: string;
  unit: string;
  points: P[];
  lines: ChartLine<P>[];
  /** Dots on each value: for series with gaps (empty buckets have no latency), where lone values draw no line. */
  markers?: boolean;
}) {
  const holder = useRef<HTMLDivElement>(null);
  const nonZero = points.reduce((sum, point) => sum + lines.filter((line) => (line.value(point) ?? 0) > 0).length, 0);

  useEffect(() => {
    const element = holder.current;
    if (!element) return undefined;
    const data: uPlot.AlignedData = [
      points.map((point) => Date.parse(point.t) / 1000),
      ...lines.map((line) => points.map((point) => line.value(point))),
    ];
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 300),
      height: HEIGHT,
      series: [
        {},
        ...lines.map((line) => ({ label: line.label, stroke: line.color, width: 1.5, dash: line.dash, points: { show: markers, size: 4 } })),
      ],
      axes: [{}, { label: unit, size: 60 }],
      scales: { y: { range: (_plot, min, max) => [Math.min(0, min), Math.max(1, max)] } },
      legend: { live: true },
    };
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 300), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, lines, unit, markers]);

  return (
    <figure class="chart" data-chart={name} data-points={points.length} data-nonzero={nonZero}>
      <figcaption>{title}</figcaption>
      <div ref={holder} />
    </figure>
  );
}
