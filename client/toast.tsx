// Toasts (sonner) load on first use: no reader pays for them on a first visit, and most readers
// never submit the form. `showToast` may be called before the library has arrived; requests wait
// in a queue until the <Toaster> is mounted and subscribed.
import { useEffect, useState, type ComponentType } from 'react';

export interface ToastMessage {
  title: string;
  description: string;
  destructive?: boolean;
}

type SonnerModule = typeof import('sonner');

const queue: ToastMessage[] = [];
let wake: (() => void) | null = null;

export function showToast(message: ToastMessage): void {
  queue.push(message);
  wake?.();
}

export function ToastHost() {
  const [sonner, setSonner] = useState<SonnerModule | null>(null);
  const [pending, setPending] = useState(0);

  useEffect(() => {
    wake = () => setPending((n) => n + 1);
    if (queue.length > 0) wake();
    return () => {
      wake = null;
    };
  }, []);

  useEffect(() => {
    if (pending === 0) return;
    if (!sonner) {
      void import('sonner').then(setSonner);
      return;
    }
    for (const message of queue.splice(0)) {
      const options = { description: message.description };
      if (message.destructive) sonner.toast.error(message.title, options);
      else sonner.toast(message.title, options);
    }
  }, [pending, sonner]);

  if (!sonner) return null;
  const Toaster = sonner.Toaster as ComponentType<Parameters<SonnerModule['Toaster']>[0]>;
  // sonner's defaults are the seed's: 3 visible, about 4 s, 356 px wide, 14 px apart.
  return <Toaster richColors closeButton position="bottom-right" />;
}
