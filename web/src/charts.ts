import { Chart, registerables, type ChartDataset, type ChartType } from 'chart.js';
import { h } from './dom';

Chart.register(...registerables);
Chart.defaults.color = '#a9b4c6';
Chart.defaults.borderColor = 'rgba(148, 163, 184, 0.14)';
Chart.defaults.font.family = 'Inter, "Segoe UI", system-ui, sans-serif';
Chart.defaults.animation = false;

export const palette = ['#4f9cf9', '#34d399', '#f59e0b', '#f472b6', '#a78bfa', '#22d3ee', '#f87171', '#a3e635', '#fb923c', '#e879f9'];

export interface Series {
  label: string;
  data: (number | null)[];
  color?: string;
  type?: 'bar' | 'line';
  axis?: 'y' | 'y2';
  stack?: string;
}

// A chart that keeps its canvas and updates in place when new data comes.
export class SimpleChart {
  readonly el: HTMLElement;
  private chart: Chart | null = null;
  private readonly canvas: HTMLCanvasElement;
  private signature = '';

  constructor(
    private readonly kind: ChartType,
    private readonly options: { y?: string; y2?: string; stacked?: boolean; height?: number; testid?: string } = {},
  ) {
    this.canvas = h('canvas');
    this.el = h('div', { class: 'chart', style: { height: `${options.height ?? 240}px` }, 'data-testid': options.testid }, this.canvas);
  }

  update(labels: string[], series: Series[]): void {
    const signature = JSON.stringify([labels, series]);
    if (signature === this.signature) return;
    this.signature = signature;
    const datasets = series.map((s, i) => {
      const color = s.color ?? palette[i % palette.length];
      const dataset: Record<string, unknown> = {
        label: s.label,
        data: s.data,
        backgroundColor: this.kind === 'doughnut' ? labels.map((_, j) => palette[j % palette.length]) : s.type === 'line' ? `${color}33` : `${color}cc`,
        borderColor: this.kind === 'doughnut' ? '#111827' : color,
        borderWidth: s.type === 'line' || this.kind === 'line' ? 2 : 0,
        pointRadius: 2,
        tension: 0.25,
        yAxisID: s.axis ?? 'y',
      };
      if (s.type) dataset.type = s.type;
      if (s.stack) dataset.stack = s.stack;
      return dataset as unknown as ChartDataset;
    });
    if (this.chart) {
      this.chart.data.labels = labels;
      this.chart.data.datasets = datasets;
      this.chart.update('none');
      return;
    }
    const scales: Record<string, unknown> =
      this.kind === 'doughnut'
        ? {}
        : {
            x: { stacked: this.options.stacked, grid: { display: false } },
            y: { stacked: this.options.stacked, beginAtZero: true, title: { display: !!this.options.y, text: this.options.y } },
            ...(this.options.y2
              ? { y2: { position: 'right', beginAtZero: true, grid: { display: false }, title: { display: true, text: this.options.y2 } } }
              : {}),
          };
    this.chart = new Chart(this.canvas, {
      type: this.kind,
      data: { labels, datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
        scales: scales as never,
      },
    });
  }

  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
  }
}
