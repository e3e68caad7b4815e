# How far the "Near km" of a tap on the map lies from the km of the point tapped, on the
# browser journey's fixture route (libs/route/src/synthetic.rs: bearing 90±15° over 5 km,
# a point every 50 m) drawn as the map draws it (Douglas-Peucker at 10 m, app/src/trips/days.rs),
# measured the old way (the nearest vertex of the line) and the new one (the tap's foot on the
# nearest stretch, services/web-assets/app/map.js). Run: python3 bench/near_km.py
import math, random
R=6371008.8
pts=[(0.0,0.0)]; x=y=0.0; t=0.0
for i in range(1, int(60000/50)+1):
    b=math.radians(90+15*math.sin(2*math.pi*t/5000)); x+=50*math.sin(b); y+=50*math.cos(b); t+=50; pts.append((x,y))
def seg(p,a,b):
    ax,ay=a; bx,by=b; px,py=p; dx,dy=bx-ax,by-ay; L=dx*dx+dy*dy
    u=0 if L==0 else max(0,min(1,((px-ax)*dx+(py-ay)*dy)/L)); qx,qy=ax+u*dx,ay+u*dy
    return (px-qx)**2+(py-qy)**2
keep=[False]*len(pts); keep[0]=keep[-1]=True; st=[(0,len(pts)-1)]
while st:
    s,e=st.pop(); best=(0,0)
    for k in range(s+1,e):
        d=seg(pts[k],pts[s],pts[e]);
        if d>best[0]: best=(d,k)
    if best[0]>100: keep[best[1]]=True; st+=[(s,best[1]),(best[1],e)]
V=[i for i,k in enumerate(keep) if k]
gaps=[(V[j+1]-V[j])*50 for j in range(len(V)-1)]
print("vertices",len(V),"gap m min/median/max",min(gaps),sorted(gaps)[len(gaps)//2],max(gaps))
random.seed(1); errs=[]
for _ in range(2000):
    i=random.randrange(len(pts)); true_km=i*0.05
    near=min(V,key=lambda v:(pts[v][0]-pts[i][0])**2+(pts[v][1]-pts[i][1])**2)
    errs.append(abs(near*0.05-true_km))
errs.sort(); print("vertex km error p50 %.2f p90 %.2f max %.2f; share over 0.3 km: %.0f%%"%(errs[1000],errs[1800],errs[-1],100*sum(e>0.3 for e in errs)/len(errs)))
cum=[0.0]
for j in range(1,len(V)):
    a,b=pts[V[j-1]],pts[V[j]]; cum.append(cum[-1]+math.hypot(b[0]-a[0],b[1]-a[1]))
perr=[]
random.seed(1)
for _ in range(2000):
    i=random.randrange(len(pts)); p=pts[i]; best=None
    for j in range(1,len(V)):
        a,b=pts[V[j-1]],pts[V[j]]; dx,dy=b[0]-a[0],b[1]-a[1]; L=dx*dx+dy*dy
        u=max(0,min(1,((p[0]-a[0])*dx+(p[1]-a[1])*dy)/L)); q=(a[0]+u*dx,a[1]+u*dy); d=math.hypot(p[0]-q[0],p[1]-q[1])
        if best is None or d<best[0]: best=(d,(cum[j-1]+u*math.sqrt(L))/1000)
    perr.append(abs(best[1]-i*0.05))
perr.sort(); print("foot km error p50 %.3f p90 %.3f max %.3f"%(perr[1000],perr[1800],perr[-1]))
