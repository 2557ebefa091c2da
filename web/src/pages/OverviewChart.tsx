import { useEffect, useRef } from 'react';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';

/**
 * The stacked bar chart of messages per channel, drawn by Chart.js on a canvas. Loaded with a dynamic import
 * (OverviewPage), so Chart.js is its own chunk; only the parts a bar chart uses are registered (tree-shaken).
 * The canvas is an image with a text summary; the page shows the same numbers as a table.
 */
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

export interface ChartSeries {
  label: string;
  colour: string;
  values: number[];
}

export default function OverviewChart({ labels, series, summary }: { labels: string[]; series: ChartSeries[]; summary: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar'> | undefined>(undefined);
  useEffect(() => {
    if (!canvas.current) return;
    chart.current = new Chart(canvas.current, {
      type: 'bar',
      data: { labels: [], datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true, ticks: { color: '#57606a', maxRotation: 0, autoSkipPadding: 12 }, grid: { display: false } },
          y: { stacked: true, beginAtZero: true, ticks: { color: '#57606a', precision: 0 }, grid: { color: '#eaeef2' } },
        },
        plugins: { legend: { position: 'bottom', labels: { color: '#1f2328', boxWidth: 14 } } },
      },
    });
    return () => chart.current?.destroy();
  }, []);
  useEffect(() => {
    if (!chart.current) return;
    chart.current.data.labels = labels;
    chart.current.data.datasets = series.map((entry) => ({ label: entry.label, data: entry.values, backgroundColor: entry.colour, borderColor: '#ffffff', borderWidth: 1 }));
    chart.current.update();
  }, [labels, series]);
  return (
    <div className="chart-box">
      <canvas ref={canvas} role="img" aria-label={summary}>
        {summary}
      </canvas>
    </div>
  );
}
