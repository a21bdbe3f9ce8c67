"""Running many points: the points of a sweep, running them (threads or Dask), and the results files they go to."""
