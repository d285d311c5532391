"""asv benchmarks of rbd; run them from asv_benchmarks/ (see asv.conf.json).

Modules: ``spatial`` (the spatial-algebra kernels), ``kinematics``,
``dynamics`` (single calls and batches); ``common`` holds the shared set-up.
"""
